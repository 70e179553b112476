/**
 * What the response cache may keep and for how long (RFC 9111, as a shared cache), and the keys
 * it keeps answers under. Pure functions: no store, no exchange.
 */
import type { ResponseHead } from '../response-parser.js'

/** The management API's and the export file's shape of a proxy's `cache`. */
export const cacheSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['ttl_s'],
  description: 'Response cache of GET/HEAD answers (null: none). ttl_s: how long an answer is kept when the backend gives no Cache-Control max-age/s-maxage or Expires; vary: request headers that make separate entries; shared: on an authenticated collection, one entry for all clients (default false: one per client).',
  properties: {
    ttl_s: { type: 'integer', minimum: 1, maximum: 31_536_000 },
    vary: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$" }, default: [] },
    shared: { type: 'boolean', default: false }
  }
}

/** Statuses cacheable by default (RFC 9110 15.1) that the cache keeps. */
const STORABLE = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501])
/** Not kept with the answer: the gateway sets these per request, or they are per connection. */
const NOT_STORED = new Set(['age', 'date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'cache-status'])

/**
 * How long an answer stays fresh, in ms, or -1 when a shared cache must not keep it: no-store,
 * private and no-cache (it would need revalidation each time), Set-Cookie, `Vary: *`, a status
 * not cacheable by default. The backend's s-maxage, max-age or Expires win over the proxy's ttl.
 */
export function freshnessMs (h: ResponseHead, defaultTtlS: number, now: number): number {
  if (!STORABLE.has(h.status)) return -1
  let sMaxAge = -1
  let maxAge = -1
  let expires: string | null = null
  let date: string | null = null
  for (const [k, v] of h.headers) {
    if (k === 'cache-control') {
      for (const d of v.toLowerCase().split(',')) {
        const [name, arg] = d.trim().split('=')
        if (name === 'no-store' || name === 'private' || name === 'no-cache') return -1
        if (name === 's-maxage') sMaxAge = seconds(arg)
        else if (name === 'max-age') maxAge = seconds(arg)
      }
    } else if (k === 'set-cookie') return -1
    else if (k === 'vary' && v.includes('*')) return -1
    else if (k === 'expires') expires = v
    else if (k === 'date') date = v
  }
  if (sMaxAge >= 0) return sMaxAge > 0 ? sMaxAge * 1000 : -1
  if (maxAge >= 0) return maxAge > 0 ? maxAge * 1000 : -1
  if (expires !== null) {
    // An invalid Expires (such as 0) means already expired (RFC 9111 5.3).
    const at = Date.parse(expires)
    const base = date !== null && !Number.isNaN(Date.parse(date)) ? Date.parse(date) : now
    const ms = Number.isNaN(at) ? -1 : at - base
    return ms > 0 ? ms : -1
  }
  return defaultTtlS * 1000
}

function seconds (arg: string | undefined): number {
  const n = Number((arg ?? '').replace(/"/g, ''))
  return Number.isInteger(n) && n >= 0 ? n : -1
}

/** The headers kept with an answer (lower-case names). */
export function storedHeaders (headers: ReadonlyArray<[string, string]>): Array<[string, string]> {
  return headers.filter(([k]) => !NOT_STORED.has(k))
}

/**
 * The backend's Vary names that make separate entries (lower case). Accept-Encoding is left out
 * (entries are kept unencoded; the gateway encodes per request) and so is Origin (CORS headers
 * are the gateway's, added per request).
 */
export function varyNames (headers: ReadonlyArray<[string, string]>): string[] {
  const out: string[] = []
  for (const [k, v] of headers) {
    if (k !== 'vary') continue
    for (const n of v.split(',')) {
      const name = n.trim().toLowerCase()
      if (name !== '' && name !== 'accept-encoding' && name !== 'origin' && !out.includes(name)) out.push(name)
    }
  }
  return out.sort()
}

/** The request's values of `names`, as one key part (absent and empty differ). */
export function varyPart (headers: ReadonlyArray<[string, string]>, names: readonly string[]): string {
  let out = ''
  for (const n of names) {
    let v: string | null = null
    for (const [k, val] of headers) if (k === n) v = v === null ? val : `${v}, ${val}`
    out += v === null ? '\u0000' : `${v.length}:${v}`
    out += '\u0001'
  }
  return out
}
