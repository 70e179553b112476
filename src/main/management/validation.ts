/** Shapes and rules of collection and proxy fields, shared by their routes. */
import { validationFailed, type AppError, type ErrorDetail } from '../../common/errors.js'

const headerName = { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$" }
export const headersSchema = {
  type: 'array',
  maxItems: 100,
  items: {
    oneOf: [
      { type: 'object', additionalProperties: false, required: ['name', 'value'], properties: { name: headerName, value: { type: 'string', maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' } } },
      { type: 'object', additionalProperties: false, required: ['name', 'env'], properties: { name: headerName, env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,255}$' } } }
    ]
  }
}

const SEGMENT = /^[A-Za-z0-9._~!$&'()+,;=:@%-]+$/
const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]{0,63})\}$/

/** base_path: `/` or `/seg[/seg...]`, no trailing slash, no dot segments. */
export function basePathProblem (p: string): string | null {
  if (!p.startsWith('/')) return "must start with '/'"
  if (p === '/') return null
  if (p.endsWith('/')) return "must not end with '/'"
  for (const s of p.slice(1).split('/')) {
    if (s === '' || s === '.' || s === '..' || !SEGMENT.test(s) || s.includes('%')) return `has an invalid segment '${s}'`
  }
  return null
}

export function upstreamProblem (u: string): string | null {
  let url: URL
  try { url = new URL(u) } catch { return 'must be an absolute http:// or https:// URL' }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http:// or https:// URL'
  if (url.search !== '' || url.hash !== '') return 'must not carry a query or fragment'
  if (url.username !== '' || url.password !== '') return 'must not carry credentials; use collection headers'
  return null
}

export interface PathShape { params: string[], wildcard: boolean }

/** Proxy path or target path: static segments, `{param}` segments, optional trailing `/*`. */
export function parsePath (p: string): PathShape | string {
  if (!p.startsWith('/')) return "must start with '/'"
  if (p === '/') return { params: [], wildcard: false }
  const segs = p.slice(1).split('/')
  const params: string[] = []
  let wildcard = false
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]! // i < segs.length
    if (s === '*') {
      if (i !== segs.length - 1) return "may use '/*' only as its last segment"
      wildcard = true
      continue
    }
    const m = PARAM.exec(s)
    const name = m?.[1]
    if (name !== undefined) {
      if (params.includes(name)) return `repeats the parameter '{${name}}'`
      params.push(name)
      continue
    }
    if (s === '' && i === segs.length - 1) continue // a trailing slash is part of the path
    if (s === '' || s === '.' || s === '..' || !SEGMENT.test(s) || s.includes('{') || s.includes('}') || s.includes('*')) return `has an invalid segment '${s}'`
  }
  return { params, wildcard }
}

/**
 * Problems of a proxy's path and target path together (target keeps the same names and wildcard).
 * A target path that was not sent (it defaults to the path) is not reported on its own.
 */
export function proxyPathProblems (path: string, target: string, targetGiven = true): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const a = parsePath(path)
  const b = targetGiven ? parsePath(target) : a
  if (typeof a === 'string') details.push({ field: 'path', message: a })
  if (typeof b === 'string' && targetGiven) details.push({ field: 'target_path', message: b })
  if (typeof a !== 'string' && typeof b !== 'string') {
    const unknown = b.params.filter(x => !a.params.includes(x))
    if (unknown.length > 0) details.push({ field: 'target_path', message: `uses ${unknown.map(x => `{${x}}`).join(', ')} which the path does not define` })
    if (a.wildcard !== b.wildcard) details.push({ field: 'target_path', message: a.wildcard ? "must end with '/*' like the path" : "may end with '/*' only when the path does" })
  }
  return details
}

export function checkProxyPaths (path: string, target: string, targetGiven = true): void {
  const details = proxyPathProblems(path, target, targetGiven)
  if (details.length > 0) throw validationFailed(`The proxy paths are invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
}

/** The path checks of a proxy body, for the router to report with the body's other problems. */
export function proxyBodyProblems (b: Record<string, unknown>): ErrorDetail[] {
  if (typeof b.path !== 'string') return []
  const given = typeof b.target_path === 'string'
  return proxyPathProblems(b.path, given ? b.target_path as string : b.path, given)
}

/** Problems of a collection's base path and upstream URL (fields of another type are the schema's to report). */
export function collectionFieldProblems (body: { base_path?: unknown, upstream_url?: unknown }): ErrorDetail[] {
  const details: ErrorDetail[] = []
  if (typeof body.base_path === 'string') {
    const p = basePathProblem(body.base_path)
    if (p !== null) details.push({ field: 'base_path', message: p })
  }
  if (typeof body.upstream_url === 'string') {
    const p = upstreamProblem(body.upstream_url)
    if (p !== null) details.push({ field: 'upstream_url', message: p })
  }
  return details
}

export function checkCollectionFields (body: { base_path?: string, upstream_url?: string }): void {
  const details = collectionFieldProblems(body)
  if (details.length > 0) throw validationFailed(`The collection is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
}

export const etag = (version: number): Record<string, string> => ({ etag: `"${version}"` })

const NOT_A_PARAMETER = 'is not a parameter of this list'

/** The 400 for a list query's problems: unknown parameters named first, then bad values. */
export function invalidListQuery (details: ErrorDetail[]): AppError {
  const unknown = details.filter(d => d.message.startsWith(NOT_A_PARAMETER))
  const bad = details.filter(d => !d.message.startsWith(NOT_A_PARAMETER))
  const parts = [
    ...(unknown.length > 0 ? [`unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.map(d => `'${d.field}'`).join(', ')} (${unknown[0]!.message.slice(NOT_A_PARAMETER.length + 2)})`] : []),
    ...bad.map(d => `${d.field} ${d.message}`)
  ]
  const text = parts.join('; ')
  return validationFailed(`${text.charAt(0).toUpperCase()}${text.slice(1)}.`, details)
}

/**
 * The one parser of list-route queries: `limit` (default 50, 1-500), `cursor`, `order` where
 * the route has one (its default given), and the route's own filter names. Any other parameter
 * is refused with 400 naming it (a misspelt filter would otherwise list everything); every
 * problem of the query is reported at once. A route that checks its filters' values too passes
 * `problems`: this parser adds to it instead of throwing, and the route throws for them all.
 */
export function pageQuery (query: URLSearchParams, opts: { filters?: readonly string[], order?: 'asc' | 'desc', problems?: ErrorDetail[] } = {}): { limit: number, cursor?: string, order: 'asc' | 'desc' } {
  const details: ErrorDetail[] = opts.problems ?? []
  const known = new Set(['limit', 'cursor', ...(opts.order === undefined ? [] : ['order']), ...(opts.filters ?? [])])
  const unknown = [...new Set(query.keys())].filter(k => !known.has(k))
  for (const k of unknown) details.push({ field: k, message: `${NOT_A_PARAMETER}; it takes ${[...known].join(', ')}` })
  const raw = query.get('limit')
  const limit = raw === null ? 50 : Number(raw)
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) details.push({ field: 'limit', message: 'must be an integer from 1 to 500' })
  const order = query.get('order') ?? opts.order ?? 'asc'
  if (order !== 'asc' && order !== 'desc') details.push({ field: 'order', message: "must be 'asc' or 'desc'" })
  if (details.length > 0 && opts.problems === undefined) throw invalidListQuery(details)
  return { limit, cursor: query.get('cursor') ?? undefined, order: order as 'asc' | 'desc' }
}
