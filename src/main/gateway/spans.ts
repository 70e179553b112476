/**
 * The gateway's spans, with OpenTelemetry's HTTP semantic conventions: one
 * SERVER span per request (started when the exchange copies the head), and
 * children for the access decision when it waits on Redis or a remote issuer,
 * the backend call (CLIENT, its traceparent sent to the backend; on a
 * balanced upstream one per attempt), the response cache's lookup and the
 * workflow run. Attributes are written only for sampled spans, at the end.
 */
import { formatTraceparent } from '../../common/trace-context.js'
import { KIND, type Span } from '../observability/tracing/span.js'
import type { GatewayExchange } from './exchange.js'

/** The proxy's path template as clients call it (http.route), e.g. `/billing/invoices/{id}`. */
export function routeTemplate (basePath: string, path: string): string {
  if (path === '/' || path === '') return basePath
  return basePath === '/' ? path : basePath + path
}

/** The backend call's CLIENT span; returns the traceparent to send with it. */
export function startBackendSpan (x: GatewayExchange, target: string): string {
  const tracer = x.ctx.tracer!
  const span = tracer.child(x.span!, x.method, KIND.client)
  x.backendSpan = span
  if (span.sampled) {
    const up = x.match!.route.upstream
    const a = span.attributes
    a['http.request.method'] = x.method
    a['server.address'] = up.hostname
    a['server.port'] = up.port
    // The query is left out: it may carry secrets the backend expects and a trace store should not keep.
    a['url.full'] = `${up.protocol}//${up.hostHeader}${target.split('?', 1)[0]}`
    a['gatehouse.upstream.target'] = `${up.protocol}//${up.hostHeader}`
  }
  return formatTraceparent(span.traceId, span.spanId, span.sampled)
}

/**
 * One attempt on a balanced upstream: its own CLIENT span under the server span, naming its
 * target; a retry's carries `http.request.resend_count` = 1, 2, … (OpenTelemetry's HTTP
 * convention). The attempt that answers stays `x.backendSpan`, ended with the request; one
 * dropped for a retry is ended at once (endAttemptSpan). Returns the traceparent to send with it.
 */
export function startAttemptSpan (x: GatewayExchange, target: { url: string, hostname: string, port: number, secure: boolean, hostHeader: string }, path: string, resends: number): string {
  const span = x.ctx.tracer!.child(x.span!, x.method, KIND.client)
  x.backendSpan = span
  if (span.sampled) {
    const a = span.attributes
    a['http.request.method'] = x.method
    a['server.address'] = target.hostname
    a['server.port'] = target.port
    a['url.full'] = `${target.secure ? 'https' : 'http'}://${target.hostHeader}${path.split('?', 1)[0]}`
    a['gatehouse.upstream.target'] = target.url
    if (resends > 0) a['http.request.resend_count'] = resends
  }
  return formatTraceparent(span.traceId, span.spanId, span.sampled)
}

/** An attempt given up for a retry: its answer's status (a 502/503/504) or why it failed ('connect', 'timeout', 'protocol'). */
export function endAttemptSpan (x: GatewayExchange, span: Span, status: number, error: string): void {
  if (span.sampled) {
    if (status > 0) span.attributes['http.response.status_code'] = status
    span.attributes['error.type'] = error
    span.fail(undefined)
  }
  if (x.backendSpan === span) x.backendSpan = null
  x.ctx.tracer!.end(span)
}

/** Ends the request's spans when the exchange finishes (backend call first, then the server span). */
export function endRequestSpans (x: GatewayExchange): void {
  const tracer = x.ctx.tracer!
  const span = x.span!
  const status = x.status
  const back = x.backendSpan
  if (back !== null) {
    if (back.sampled) {
      if (status > 0) back.attributes['http.response.status_code'] = status
      // An attempt that failed says why ('connect', 'timeout'…) rather than the answer the client got.
      if (status >= 500 || status === 0) { back.attributes['error.type'] ??= status === 0 ? 'aborted' : String(status); back.fail(undefined) }
    }
    tracer.end(back)
  }
  if (span.sampled) describeServer(x, span)
  tracer.end(span)
}

function describeServer (x: GatewayExchange, span: Span): void {
  const a = span.attributes
  const route = x.match?.route
  a['http.request.method'] = x.method
  a['url.path'] = x.url
  a['url.scheme'] = x.proto
  const host = x.publicHost
  const colon = host.lastIndexOf(':')
  a['server.address'] = colon > 0 && !host.endsWith(']') ? host.slice(0, colon) : host
  a['client.address'] = x.remoteIp
  a['gatehouse.request_id'] = x.rid
  for (const [k, v] of x.headers) if (k === 'user-agent') { a['user_agent.original'] = v; break }
  if (route !== undefined) {
    const template = routeTemplate(route.collection.base_path, route.proxy.path)
    a['http.route'] = template
    a['gatehouse.proxy_id'] = route.proxy.id
    a['gatehouse.collection_id'] = route.collection.id
    span.name = `${x.method} ${template}`
  }
  if (x.principal !== null) a['gatehouse.client_id'] = x.principal.client_id
  if (x.status > 0) a['http.response.status_code'] = x.status
  // Server spans: 5xx is an error, 4xx is the client's (OpenTelemetry's HTTP conventions); a cut connection too.
  if (x.status >= 500 || x.aborted) {
    a['error.type'] = x.aborted && x.status === 0 ? 'aborted' : String(x.status)
    span.fail(x.aborted ? 'the client went away' : undefined)
  }
}

/** The access decision (authentication, then the policy's counters) when it waits on Redis or an issuer. */
export function startAccessSpan (x: GatewayExchange): Span {
  return x.ctx.tracer!.child(x.span!, 'gateway access', KIND.internal)
}

export function endAccessSpan (x: GatewayExchange, span: Span, refused: { status: number, code: string } | null): void {
  if (span.sampled && refused !== null) {
    span.attributes['gatehouse.access.refused'] = refused.code
    span.attributes['http.response.status_code'] = refused.status
    if (refused.status >= 500) span.fail(refused.code)
  }
  x.ctx.tracer!.end(span)
}

/** The response cache's lookup (memory or Redis), a child of the server span. */
export function startCacheSpan (x: GatewayExchange, store: 'memory' | 'redis'): Span {
  const span = x.ctx.tracer!.child(x.span!, 'gateway cache lookup', KIND.internal)
  if (span.sampled) span.attributes['gatehouse.cache.store'] = store
  return span
}

/**
 * Ends the lookup's span with what the cache decided: `gatehouse.cache.status` = hit, miss or
 * stale, and `gatehouse.cache.fwd` with RFC 9211's reason (uri-miss, vary-miss, stale) on a
 * forward. `outcome` null: the lookup failed (`error`) or the client left first.
 */
export function endCacheSpan (x: GatewayExchange, span: Span, outcome: string | null, error: string | null): void {
  if (span.end !== 0) return
  if (span.sampled) {
    const a = span.attributes
    if (outcome !== null) {
      a['gatehouse.cache.status'] = outcome === 'hit' ? 'hit' : outcome === 'stale' ? 'stale' : 'miss'
      if (outcome !== 'hit') a['gatehouse.cache.fwd'] = outcome
    }
    if (error !== null && outcome === null && error !== 'the client went away') { a['error.type'] = 'cache_error'; span.fail(error) }
  }
  x.ctx.tracer!.end(span)
}
