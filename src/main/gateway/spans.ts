/**
 * The gateway's spans, with OpenTelemetry's HTTP semantic conventions: one
 * SERVER span per request (started when the exchange copies the head), and
 * children for the access decision when it waits on Redis or a remote issuer,
 * the backend call (CLIENT, its traceparent sent to the backend) and the
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
    // A balanced upstream's attempts name their own target (noteAttempt).
    if (x.match!.route.balanced === null) {
      a['url.full'] = `${up.protocol}//${up.hostHeader}${target.split('?', 1)[0]}`
      a['gatehouse.upstream.target'] = `${up.protocol}//${up.hostHeader}`
    }
  }
  return formatTraceparent(span.traceId, span.spanId, span.sampled)
}

/**
 * A balanced upstream's attempt: the backend call's span names the target of the latest attempt
 * and counts the resends (`http.request.resend_count`, OpenTelemetry's HTTP convention).
 */
export function noteAttempt (span: Span, targetUrl: string, resends: number): void {
  if (!span.sampled) return
  span.attributes['gatehouse.upstream.target'] = targetUrl
  if (resends > 0) span.attributes['http.request.resend_count'] = resends
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
      if (status >= 500 || status === 0) { back.attributes['error.type'] = status === 0 ? 'aborted' : String(status); back.fail(undefined) }
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
