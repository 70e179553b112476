/**
 * Per-proxy request validation, compiled when the route table is built: declared
 * path and query parameters (presence, type, and, when the proxy asks for it with
 * apply_parameter_defaults, defaults added to the forwarded query) and the JSON body against `request_schema` (ajv). A proxy with neither
 * compiles to null, so the stage costs nothing.
 */
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { AppError, badRequest, unsupportedMediaType, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../common/json-depth.js'
import { jsonSyntaxError } from '../../common/json-error.js'
import type { Proxy, ProxyParameter } from '../../common/types.js'

export interface ValidationInput {
  /** Request method: a body is required only of methods that define one. */
  method: string
  /** Raw (percent-encoded) values of the path's params, in path order. */
  params: string[]
  paramNames: string[]
  /** Raw query string without '?' ('' when none). */
  query: string
  contentType: string | undefined
  body: Buffer | null
}

export type RequestValidator = (input: ValidationInput) => { query: string } | AppError
export interface CompiledValidator { validate: RequestValidator, needsBody: boolean }

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false }))

// GET, HEAD and DELETE define no body: a GET on a GET+POST proxy is not refused for lacking one.
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

const CHECK: Record<ProxyParameter['type'], (v: string) => boolean> = {
  string: () => true,
  integer: v => /^-?\d{1,15}$/.test(v),
  number: v => v.trim() !== '' && Number.isFinite(Number(v)),
  boolean: v => v === 'true' || v === 'false'
}

function bodyDetails (v: ValidateFunction): ErrorDetail[] {
  return (v.errors ?? []).map(e => {
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
    if (e.keyword === 'required') field = [field, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')
    if (e.keyword === 'additionalProperties') field = [field, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.')
    const message = e.keyword === 'required' ? 'is required' : e.keyword === 'additionalProperties' ? 'is not allowed' : e.message ?? 'is invalid'
    return { field: field === '' ? 'body' : `body.${field}`, message }
  })
}

/** Throws when the proxy's schema does not compile (caught when the route table is built). */
export function compileRequestValidator (proxy: Pick<Proxy, 'parameters' | 'request_schema'> & Partial<Pick<Proxy, 'apply_parameter_defaults'>>): CompiledValidator | null {
  // Off by default: a default documents what the backend assumes; adding it would change the URL the backend sees (signatures, cache keys).
  const applyDefaults = proxy.apply_parameter_defaults === true
  const pathParams = proxy.parameters.filter(p => p.location === 'path')
  const queryParams = proxy.parameters.filter(p => p.location === 'query')
  const schema = proxy.request_schema !== null && Object.keys(proxy.request_schema).length > 0 ? ajv.compile(proxy.request_schema) : null
  if (pathParams.length === 0 && queryParams.length === 0 && schema === null) return null
  const bodyRequired = schema !== null && Array.isArray((proxy.request_schema as { required?: unknown }).required) &&
    ((proxy.request_schema as { required: unknown[] }).required.length > 0)

  const validate: RequestValidator = input => {
    const details: ErrorDetail[] = []
    for (const p of pathParams) {
      const i = input.paramNames.indexOf(p.name)
      if (i < 0) continue
      let v: string
      const raw = input.params[i]! // params has one value per paramNames entry
      try { v = decodeURIComponent(raw) } catch { v = raw }
      if (!CHECK[p.type ?? 'string'](v)) details.push({ field: `path.${p.name}`, message: `must be ${article(p.type)}` })
    }
    let query = input.query
    if (queryParams.length > 0) {
      const sp = new URLSearchParams(query)
      const added: string[] = []
      for (const p of queryParams) {
        const values = sp.getAll(p.name)
        if (values.length === 0) {
          const hasDefault = p.default !== undefined && p.default !== null
          if (hasDefault && applyDefaults) added.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(String(p.default))}`)
          else if (p.required && !hasDefault) details.push({ field: `query.${p.name}`, message: 'is required' })
          continue
        }
        for (const v of values) {
          if (!CHECK[p.type ?? 'string'](v)) { details.push({ field: `query.${p.name}`, message: `must be ${article(p.type)}` }); break }
        }
      }
      if (added.length > 0) query = query === '' ? added.join('&') : `${query}&${added.join('&')}`
    }
    if (schema !== null) {
      const empty = input.body === null || input.body.length === 0
      if (empty) {
        if (bodyRequired && BODY_METHODS.has(input.method)) details.push({ field: 'body', message: 'is required' })
      } else {
        const type = (input.contentType ?? '').split(';')[0]!.trim().toLowerCase() // split gives at least one element
        if (type !== 'application/json' && !type.endsWith('+json')) return unsupportedMediaType('This API takes a JSON body: send Content-Type: application/json.')
        let data: unknown
        const text = input.body!.toString('utf8')
        if (jsonDepthExceeds(text)) return badRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`)
        try { data = JSON.parse(text) } catch (err) { return jsonSyntaxError(text, err as Error) }
        if (!schema(data)) details.push(...bodyDetails(schema))
      }
    }
    if (details.length > 0) return validationFailed(`The request is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
    return { query }
  }
  return { validate, needsBody: schema !== null }
}

const article = (t: string | undefined) => t === 'integer' ? 'an integer' : t === 'number' ? 'a number' : t === 'boolean' ? 'true or false' : 'a string'
