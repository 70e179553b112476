/**
 * Collection + proxies → an OpenAPI 3.0.3 or 3.1.0 document describing the API as the
 * gateway serves it: paths relative to the collection's base path, the gateway's error
 * answers and, when the collection requires auth, the gateway's three auth headers.
 */
import type { Collection, Proxy, ProxyParameter } from '../../common/types.js'
import {
  ERROR_SCHEMA_NAME, errorResponseRefs, gatewayErrorResponses, gatewayErrorSchema, gatewaySecurity, gatewaySecuritySchemes
} from './openapi-gateway-parts.js'
import { toOas30Schema } from './schema-dialect.js'
import { isObject, transformSchema, type JsonObject } from './schema-walk.js'

export interface OpenApiExportOptions {
  version: '3.0' | '3.1'
  /** The gateway's public URL (scheme, host, port); the collection's base path is appended. */
  serverUrl?: string
  /** Also describe draft proxies; by default only published ones, as the gateway serves. */
  includeDrafts?: boolean
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])
/** Extension marking the path parameter that stands for a trailing `/*` wildcard. */
export const WILDCARD_EXTENSION = 'x-gatehouse-wildcard'

/** Generates the OpenAPI document of a collection; pure, proxies in the order given. */
export function toOpenApi (collection: Collection, proxies: Proxy[], opts: OpenApiExportOptions): Record<string, unknown> {
  const v30 = opts.version === '3.0'
  const schemas: JsonObject = { [ERROR_SCHEMA_NAME]: gatewayErrorSchema() }
  const paths: Record<string, JsonObject> = {}
  const operationIds = new Set<string>()
  const hoisted = new Map<string, string>()
  const auth = collection.auth_required

  for (const proxy of proxies) {
    if (proxy.status !== 'published' && opts.includeDrafts !== true) continue
    const { path, templated, wildcard } = openApiPath(proxy.path)
    const item = paths[path] ??= {}
    const base = operationBase(proxy.name)
    const requestSchema = exportSchema(proxy.request_schema, `${base}_request`, schemas, hoisted, v30)
    const responseSchema = exportSchema(proxy.response_schema, `${base}_response`, schemas, hoisted, v30)
    const parameters = parametersOf(proxy.parameters, templated, wildcard)
    for (const method of proxy.methods) {
      const key = method.toLowerCase()
      // the store refuses a second proxy on the same path and method; should one slip in, the first wins
      if (item[key] !== undefined) continue
      const op: JsonObject = {
        operationId: unique(proxy.methods.length > 1 ? base + capitalise(key) : base, operationIds),
        summary: proxy.name
      }
      if (proxy.description.trim() !== '') op.description = proxy.description
      if (parameters.length > 0) op.parameters = parameters
      if (requestSchema !== undefined && BODY_METHODS.has(method)) {
        op.requestBody = { required: true, content: { 'application/json': { schema: requestSchema } } }
      }
      op.responses = { '200': successResponse(responseSchema, proxy.streaming), ...errorResponseRefs(auth) }
      item[key] = op
    }
  }

  const info: JsonObject = { title: collection.name, version: String(collection.version ?? 1) }
  if (collection.description?.trim()) info.description = collection.description
  const serverUrl = opts.serverUrl === undefined ? '' : opts.serverUrl.replace(/\/+$/, '')
  const doc: JsonObject = {
    openapi: v30 ? '3.0.3' : '3.1.0',
    info,
    servers: [{ url: `${serverUrl}${collection.base_path}` || '/', description: 'Gatehouse gateway' }],
    paths,
    components: { schemas, responses: gatewayErrorResponses(auth) }
  }
  if (auth) {
    (doc.components as JsonObject).securitySchemes = gatewaySecuritySchemes()
    doc.security = gatewaySecurity()
  }
  return doc
}

/** `/files/*` → `/files/{wildcard}`; `{param}` segments are kept. */
function openApiPath (proxyPath: string): { path: string, templated: string[], wildcard?: string } {
  let path = proxyPath === '' ? '/' : proxyPath
  const templated = [...path.matchAll(/\{([^}]+)\}/g)].map(m => m[1] as string)
  let wildcard: string | undefined
  if (path.endsWith('/*')) {
    wildcard = 'wildcard'
    while (templated.includes(wildcard)) wildcard = `_${wildcard}`
    path = `${path.slice(0, -1)}{${wildcard}}`
  }
  return { path, templated, wildcard }
}

function parametersOf (params: ProxyParameter[], templated: string[], wildcard: string | undefined): JsonObject[] {
  const declared = new Map(params.filter(p => p.location === 'path').map(p => [p.name, p]))
  const out = templated.map(name =>
    parameter(declared.get(name) ?? { name, location: 'path', type: 'string', required: true }))
  if (wildcard !== undefined) {
    out.push({
      name: wildcard,
      in: 'path',
      required: true,
      description: "The rest of the path (the gateway's trailing '/*' wildcard); it may span several segments, so send its '/' unencoded.",
      schema: { type: 'string' },
      [WILDCARD_EXTENSION]: true
    })
  }
  for (const p of params) if (p.location === 'query') out.push(parameter(p))
  return out
}

function parameter (p: ProxyParameter): JsonObject {
  const schema: JsonObject = { type: p.type }
  if (p.default !== undefined) schema.default = p.default
  const out: JsonObject = { name: p.name, in: p.location, required: p.location === 'path' ? true : p.required }
  if (p.description !== undefined && p.description !== '') out.description = p.description
  out.schema = schema
  return out
}

function successResponse (schema: unknown, streaming: boolean): JsonObject {
  if (schema !== undefined) return { description: 'Successful response.', content: { 'application/json': { schema } } }
  if (streaming) return { description: 'A streamed response from the backend.', content: { 'text/event-stream': { schema: { type: 'string' } } } }
  return { description: 'The response of the backend.' }
}

/**
 * A proxy schema as an OpenAPI schema: its root `$defs` move to `components.schemas`
 * (in a 3.1 document `#/$defs/…` would resolve against the document, not the schema).
 * A definition keeps its own name unless a different one took it first (`hoisted` maps
 * component names to the JSON text of what they hold, so equal definitions are shared).
 */
function exportSchema (schema: unknown, prefix: string, components: JsonObject, hoisted: Map<string, string>, v30: boolean): unknown {
  if (!isObject(schema)) return undefined
  const { $defs, definitions, ...rest } = schema
  const defs: JsonObject = { ...(isObject(definitions) ? definitions : {}), ...(isObject($defs) ? $defs : {}) }
  const names = new Map<string, string>()
  for (const [name, body] of Object.entries(defs)) {
    const text = JSON.stringify(body)
    let component = name.replace(/[^A-Za-z0-9._-]/g, '_')
    if (Object.hasOwn(components, component) && hoisted.get(component) !== text) {
      component = unique(`${prefix}_${component}`, new Set(Object.keys(components)))
    }
    names.set(name, component)
    hoisted.set(component, text)
    components[component] = {}
  }
  const rewrite = (s: unknown): unknown => transformSchema(s, node => {
    const m = typeof node.$ref === 'string' ? /^#\/(?:\$defs|definitions)\/(.+)$/.exec(node.$ref) : null
    const target = m === null ? undefined : names.get(decodePointer(m[1] as string))
    return target === undefined ? node : { ...node, $ref: `#/components/schemas/${target}` }
  })
  const convert = (s: unknown): unknown => v30 ? toOas30Schema(rewrite(s)) : rewrite(s)
  for (const [name, component] of names) components[component] = convert(defs[name])
  return convert(names.size > 0 ? rest : schema)
}

const decodePointer = (s: string): string => s.replace(/~1/g, '/').replace(/~0/g, '~')

/** `List pets` → `listPets`, `GET /pets/{id}` → `getPetsId`; never empty, never starting with a digit. */
export function operationBase (name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(w => w !== '')
    .map(w => w.length > 1 && w === w.toUpperCase() ? w.toLowerCase() : w)
  const id = words.map((w, i) => i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : capitalise(w)).join('')
  return id === '' || /^\d/.test(id) ? `op${capitalise(id)}` : id
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

function unique (base: string, taken: Set<string>): string {
  let id = base
  for (let i = 2; taken.has(id); i++) id = `${base}_${i}`
  taken.add(id)
  return id
}
