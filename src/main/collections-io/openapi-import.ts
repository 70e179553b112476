/**
 * OpenAPI 3.0/3.1 → one collection and one draft proxy per operation. Pure: the caller
 * stores the records. What cannot be carried over (header parameters, non-JSON bodies,
 * webhooks, other methods) is reported in `warnings` rather than failing the import.
 */
import { validationFailed } from '../../common/errors.js'
import type { Collection, HttpMethod, Proxy, ProxyParameter } from '../../common/types.js'
import { OPENAPI_LIMITS, readOpenApiDocument } from './openapi-document.js'
import { collectionFromDocument } from './openapi-servers.js'
import { createDerefContext, derefObject, derefSchema, warn, type DerefContext } from './schema-deref.js'
import { toJsonSchema } from './schema-dialect.js'
import { isObject, type JsonObject } from './schema-walk.js'


export interface OpenApiImportOptions {
  /** Collection base path; default: the first server URL's path, else a slug of the title. */
  base_path?: string
  /** Backend base URL; default: the first absolute server URL. */
  upstream_url?: string
  /** Collection name; default: `info.title`. */
  name?: string
  /** OPENAPI_IMPORT_MAX_BYTES: the largest document read. */
  maxBytes?: number
  /** OPENAPI_IMPORT_MAX_OPERATIONS: the most operations imported at once. */
  maxOperations?: number
}

export type ImportedCollection = Partial<Collection> & Pick<Collection, 'name' | 'base_path' | 'upstream_url'>

export interface OpenApiImport {
  collection: ImportedCollection
  proxies: Array<Partial<Proxy>>
  warnings: string[]
}

const METHODS: Record<string, HttpMethod> = { get: 'GET', post: 'POST', put: 'PUT', delete: 'DELETE', patch: 'PATCH' }
const OTHER_METHODS = new Set(['head', 'options', 'trace'])
const PARAM_TYPES = new Set(['string', 'integer', 'number', 'boolean'])

/**
 * Maps an OpenAPI 3.0.x/3.1.x document (JSON text, Buffer or parsed object) to a collection
 * and draft proxies. Throws AppError 400 (`validation_failed`, `invalid_json`), 413 or 415.
 */
export function fromOpenApi (input: unknown, opts: OpenApiImportOptions = {}): OpenApiImport {
  const { doc, version, warnings } = readOpenApiDocument(input, opts)
  const maxOperations = opts.maxOperations ?? OPENAPI_LIMITS.maxOperations
  const ctx = createDerefContext(doc, warnings)
  const collection = collectionFromDocument(doc, opts, ctx)
  const paths = doc.paths as JsonObject

  const operations: Array<{ path: string, method: HttpMethod, op: JsonObject, shared: unknown[] }> = []
  for (const [path, rawItem] of Object.entries(paths)) {
    if (!path.startsWith('/')) {
      warn(ctx, `paths: '${path}' does not start with '/'; it was skipped.`)
      continue
    }
    const item = derefObject(ctx, rawItem, `paths.${path}`)
    if (item === undefined) continue
    const shared = Array.isArray(item.parameters) ? item.parameters : []
    for (const [key, op] of Object.entries(item)) {
      if (OTHER_METHODS.has(key)) warn(ctx, `${key.toUpperCase()} ${path}: the method is not supported by the gateway; it was skipped.`)
      const method = Object.hasOwn(METHODS, key) ? METHODS[key] : undefined
      if (method === undefined || !isObject(op)) continue
      operations.push({ path, method, op, shared })
    }
  }
  if (operations.length > maxOperations) {
    throw validationFailed(`The OpenAPI document has ${operations.length} operations; at most ${maxOperations} can be imported at once (OPENAPI_IMPORT_MAX_OPERATIONS).`,
      [{ field: 'paths', message: `has more than ${maxOperations} operations` }])
  }
  if (isObject(doc.webhooks) && Object.keys(doc.webhooks).length > 0) {
    warn(ctx, `webhooks: ${Object.keys(doc.webhooks).length} webhook(s) describe calls the API makes, not routes; they were not imported.`)
  }
  const proxies = operations.map(o => proxyFromOperation(ctx, version, o.path, o.method, o.op, o.shared))
  return { collection, proxies, warnings }
}

function proxyFromOperation (ctx: DerefContext, version: '3.0' | '3.1', path: string, method: HttpMethod,
  op: JsonObject, shared: unknown[]): Partial<Proxy> {
  const where = `${method} ${path}`
  const { parameters, wildcard } = parametersOf(ctx, version, where, path, [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])])
  const gatewayPath = wildcard === undefined ? path : path.slice(0, -(wildcard.length + 2)) + '*'
  const response = successResponse(ctx, version, where, op.responses)
  const name = typeof op.operationId === 'string' && op.operationId.trim() !== '' ? op.operationId.trim() : where
  return {
    name,
    description: describe(op, name),
    methods: [method],
    path: gatewayPath,
    target_path: gatewayPath,
    headers: [],
    parameters,
    request_schema: requestSchema(ctx, version, where, op.requestBody),
    response_schema: response.schema,
    streaming: response.streaming,
    status: 'draft',
    workflow_enabled: false,
    workflow: null
  }
}

/** Summary and description joined; a summary that only repeats the name is left out. */
function describe (op: JsonObject, name: string): string {
  let summary = typeof op.summary === 'string' ? op.summary.trim() : ''
  if (summary === name) summary = ''
  const description = typeof op.description === 'string' ? op.description.trim() : ''
  if (summary === '' || description === '' || summary === description) return description || summary
  return `${summary}\n\n${description}`
}

function parametersOf (ctx: DerefContext, version: '3.0' | '3.1', where: string, path: string, raw: unknown[]):
{ parameters: ProxyParameter[], wildcard?: string } {
  // operation-level entries override path-level ones with the same name and location
  const byKey = new Map<string, JsonObject>()
  for (const [i, entry] of raw.entries()) {
    const p = derefObject(ctx, entry, `${where} parameters[${i}]`)
    if (p === undefined || typeof p.name !== 'string' || typeof p.in !== 'string') continue
    byKey.set(`${p.in}:${p.name}`, p)
  }
  const parameters: ProxyParameter[] = []
  let wildcard: string | undefined
  const templated = [...path.matchAll(/\{([^}]+)\}/g)].map(m => m[1] as string)
  for (const p of byKey.values()) {
    const name = p.name as string
    if (p.in !== 'path' && p.in !== 'query') {
      warn(ctx, `${where}: the ${String(p.in)} parameter '${name}' is not imported; the gateway's parameters are path and query only.`)
      continue
    }
    if (p.in === 'path' && !templated.includes(name)) {
      warn(ctx, `${where}: the path parameter '${name}' is not in the path; it was skipped.`)
      continue
    }
    if (p.in === 'path' && p['x-gatehouse-wildcard'] === true && path.endsWith(`/{${name}}`)) {
      wildcard = name
      continue
    }
    parameters.push(parameterFrom(ctx, version, where, p))
  }
  for (const name of templated) {
    if (!byKey.has(`path:${name}`)) parameters.push({ name, location: 'path', type: 'string', required: true })
  }
  return { parameters, wildcard }
}

function parameterFrom (ctx: DerefContext, version: '3.0' | '3.1', where: string, p: JsonObject): ProxyParameter {
  const name = p.name as string
  const schema = isObject(p.schema) ? toJsonSchema(derefSchema(ctx, p.schema, `${where} parameter '${name}'`), version) as JsonObject : {}
  if (!isObject(p.schema)) warn(ctx, `${where}: the parameter '${name}' has no schema; it was imported as a string.`)
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(t => t !== 'null' && t !== undefined)
  let type = (types[0] as ProxyParameter['type'] | undefined) ?? 'string'
  if (!PARAM_TYPES.has(type)) {
    warn(ctx, `${where}: the parameter '${name}' has type ${type}; it was imported as a string (the gateway validates scalar parameters).`)
    type = 'string'
  }
  const out: ProxyParameter = { name, location: p.in as 'path' | 'query', type, required: p.in === 'path' || p.required === true }
  if (schema.default !== undefined && (schema.default === null || typeof schema.default !== 'object')) out.default = schema.default
  if (typeof p.description === 'string' && p.description.trim() !== '') out.description = p.description.trim()
  return out
}

const JSON_MEDIA = /^application\/([\w.-]+\+)?json\s*(;.*)?$/i

/** The schema of the JSON media type of a `content` map: exact `application/json` first. */
function jsonSchemaOf (content: unknown): { found: boolean, schema?: unknown } {
  if (!isObject(content)) return { found: false }
  const key = 'application/json' in content ? 'application/json' : Object.keys(content).find(k => JSON_MEDIA.test(k))
  if (key === undefined) return { found: false }
  const media = content[key]
  return { found: true, schema: isObject(media) ? media.schema : undefined }
}

function requestSchema (ctx: DerefContext, version: '3.0' | '3.1', where: string, raw: unknown): Record<string, unknown> | null {
  if (raw === undefined) return null
  const body = derefObject(ctx, raw, `${where} requestBody`)
  if (body === undefined) return null
  const { found, schema } = jsonSchemaOf(body.content)
  if (!found) {
    const types = isObject(body.content) ? Object.keys(body.content).join(', ') : 'none'
    warn(ctx, `${where}: the request body has no JSON media type (${types}); no request schema was set.`)
    return null
  }
  const resolved = derefSchema(ctx, schema, `${where} requestBody`)
  return resolved === undefined ? null : toJsonSchema(resolved, version) as Record<string, unknown>
}

function successResponse (ctx: DerefContext, version: '3.0' | '3.1', where: string, responses: unknown):
{ schema: Record<string, unknown> | null, streaming: boolean } {
  if (!isObject(responses)) return { schema: null, streaming: false }
  // '200' before '201' before '2XX': the most specific success answer wins
  const codes = Object.keys(responses).filter(c => /^2(\d\d|XX)$/i.test(c)).sort()
  let streaming = false
  for (const code of codes) {
    const res = derefObject(ctx, responses[code], `${where} responses.${code}`)
    if (res === undefined) continue
    if (isObject(res.content) && 'text/event-stream' in res.content) streaming = true
    const { found, schema } = jsonSchemaOf(res.content)
    if (!found || schema === undefined) continue
    const resolved = derefSchema(ctx, schema, `${where} responses.${code}`)
    if (resolved !== undefined) return { schema: toJsonSchema(resolved, version) as Record<string, unknown>, streaming }
  }
  return { schema: null, streaming }
}
