/** Builds the upstream request head from the client's headers and the route (one string, written once). */
import type { CompiledRoute } from './route-table.js'

/** Never forwarded: hop-by-hop headers, and what the gateway sets or consumes itself. */
const DROP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'content-length', 'authorization', 'x-client-id', 'x-profile-id',
  'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-request-id', 'expect', 'x-real-ip'
])

export interface ClientRequestInfo {
  method: string
  headers: Array<[string, string]>
  /** Extra names the client listed in Connection (hop-by-hop by declaration). */
  connectionTokens: string[] | null
  host: string
  xff: string | null
  /** The immediate peer, appended to X-Forwarded-For. */
  remoteIp: string
  /** The client's address as the gateway determined it (behind TRUSTED_PROXIES, from X-Forwarded-For): X-Real-IP. */
  clientIp: string
  proto: 'http' | 'https'
  requestId: string
  /** The gateway's span as the backend's parent; the client's traceparent and tracestate are replaced. Null: passed on as sent. */
  traceparent: string | null
  tracestate: string | null
}

/** `basePath`: a balanced upstream's target's own (default: the route's one backend). */
export function buildTargetPath (route: CompiledRoute, params: string[], tail: string, basePath = route.upstream.basePath): string {
  let out = basePath
  const parts = route.targetParts
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]! // i < parts.length
    if (typeof p === 'string') {
      // '/' before an empty wildcard tail is dropped: /files/* with nothing after maps to the bare prefix.
      if (p === '/' && tail === '' && i + 1 < parts.length && typeof parts[i + 1] === 'object' && 'wildcard' in (parts[i + 1] as object)) continue
      out += p
    } else if ('param' in p) {
      const idx = route.paramNames.indexOf(p.param)
      out += idx >= 0 ? params[idx] : ''
    } else out += tail
  }
  return out === '' ? '/' : out
}

export function buildRequestHead (route: CompiledRoute, info: ClientRequestInfo, pathAndQuery: string, bodyLength: number | 'chunked' | 0, hostHeader = route.upstream.hostHeader): string {
  let head = `${info.method} ${pathAndQuery} HTTP/1.1\r\nhost: ${hostHeader}\r\n`
  const extraDrop = info.connectionTokens
  const traced = info.traceparent !== null
  for (let i = 0; i < info.headers.length; i++) {
    const [k, v] = info.headers[i]! // i < length, as in the loops below
    if (DROP.has(k) || route.addHeaderNames.has(k)) continue
    if (extraDrop !== null && extraDrop.includes(k)) continue
    if (traced && (k === 'traceparent' || k === 'tracestate')) continue
    head += `${k}: ${v}\r\n`
  }
  if (traced) head += info.tracestate === null ? `traceparent: ${info.traceparent}\r\n` : `traceparent: ${info.traceparent}\r\ntracestate: ${info.tracestate}\r\n`
  for (let i = 0; i < route.addHeaders.length; i++) head += `${route.addHeaders[i]![0]}: ${route.addHeaders[i]![1]}\r\n`
  head += `x-forwarded-for: ${info.xff === null ? info.remoteIp : `${info.xff}, ${info.remoteIp}`}\r\n` +
    `x-forwarded-proto: ${info.proto}\r\nx-forwarded-host: ${info.host}\r\nx-request-id: ${info.requestId}\r\n`
  // The client's X-Real-IP is dropped above: nginx-style backends trust this header as the client's address.
  if (!route.addHeaderNames.has('x-real-ip')) head += `x-real-ip: ${info.clientIp}\r\n`
  if (bodyLength === 'chunked') head += 'transfer-encoding: chunked\r\n'
  else if (bodyLength > 0 || info.method === 'POST' || info.method === 'PUT' || info.method === 'PATCH') head += `content-length: ${bodyLength}\r\n`
  return head + '\r\n'
}

/** Response headers that describe the upstream connection, not the answer. */
export const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length', 'date'])
