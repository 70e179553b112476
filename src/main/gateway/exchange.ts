/**
 * One gateway request from its head to its log record: the per-request object
 * every stage reads and writes (fastify's request+reply in one). It copies what
 * it needs from the request head (`req`) at once (invalid after the callback), owns the
 * response head (the one place headers are written), and finishes exactly once.
 */
import { randomUUID } from 'node:crypto'
import { AppError, errorBody } from '../../common/errors.js'
import type { Principal } from '../access/profile-auth.js'
import type { AccessGate } from '../access/gate.js'
import type { Config } from '../config/config.js'
import type { AccessFields, Logger } from '../logger.js'
import type { RequestRecord } from '../store/request-record.js'
import type { AcceptUpgrade, GatewayRequest, GatewayResponse, TakeConnection } from './http/types.js'
import { endRequestSpans } from './spans.js'
import { KIND, type Span } from '../observability/tracing/span.js'
import type { Tracer } from '../observability/tracing/tracer.js'
import type { GatewayOptions } from './index.js'
import { DROP_RESPONSE } from './request-head.js'
import { peerAddress } from './http/peer-address.js'
import type { Match, RouteTable } from './route-table.js'
import type { TrustedProxies } from './trusted-proxies.js'
import type { LoadShedder } from './load-shedding.js'
import { TLS_HOP_HEADER } from './tls-listener.js'
import type { Exchange, UpstreamClient } from './upstream.js'
import type { CacheSink } from './responses/cache-sink.js'
import type { ResponseCache } from './responses/response-cache.js'
import type { Encoding } from './responses/compression.js'

/** What every request of one gateway shares: settings, collaborators, the current route table. */
export interface GatewayContext {
  config: Readonly<Config>
  logger: Logger
  /** One access line per request (see accessLogger). */
  access: (f: AccessFields) => void
  observe: ((r: RequestRecord) => void) | undefined
  workflows: GatewayOptions['workflows']
  checkAccess: AccessGate
  upstream: UpstreamClient
  /** Null when no OTLP endpoint is set: then no span is ever built. */
  tracer: Tracer | null
  verifyHop: (value: string) => { remoteIp: string, fingerprint: string | null } | null
  /** Whether a new request is shed (503) because the gateway is overloaded. */
  shedder: LoadShedder
  /** TRUSTED_PROXIES: the client's address behind them, and whose X-Forwarded-Host/Proto to believe. */
  trusted: TrustedProxies
  /** Answers kept for proxies with `cache` (memory or Redis). */
  responseCache: ResponseCache
  /** Swapped in one assignment on every configuration change. */
  table: RouteTable
  inFlight: number
  /** Set while closing: called when the last request in flight finishes. */
  draining: (() => void) | null
}

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/
const NO_HEADERS: Array<[string, string]> = []

// req.forEach takes a callback; one module-level function reading `reading` avoids a closure per request.
let reading: GatewayExchange
function readHeader (k: string, v: string): void {
  const x = reading
  // The TLS relay header is never forwarded nor shown to a workflow, whoever sent it.
  if (k === TLS_HOP_HEADER) { x.hopHeader = v; return }
  switch (k) {
    case 'content-type': x.contentType = v; break
    case 'content-length': x.clCount++; x.contentLength = /^\d{1,15}$/.test(v) ? Number(v) : -2; break
    // Compared as sent: the HTTP layer reads only a literal 'chunked' as chunked, so 'CHUNKED' is refused rather than forwarded as a body it never reads.
    case 'transfer-encoding': x.teCount++; x.te = v; break
    case 'host': x.hostCount++; x.host = v; break
    case 'x-forwarded-for': x.xff = x.xff === null ? v : `${x.xff}, ${v}`; break
    case 'x-forwarded-host': x.xfHost = v; break
    case 'x-forwarded-proto': x.xfProto = v.toLowerCase(); break
    case 'x-request-id': x.requestId = REQUEST_ID.test(v) ? v : null; break
    case 'connection': x.connection = v.toLowerCase(); break
    case 'authorization': x.authorization = v; break
    case 'x-client-id': x.clientId = v; break
    case 'x-profile-id': x.profileId = v; break
    case 'origin': x.origin = v; break
    case 'accept-encoding': x.acceptEncoding = v; break
    case 'access-control-request-method': x.acrMethod = v; break
    case 'access-control-request-headers': x.acrHeaders = v; break
    case 'traceparent': x.traceparent = v; break
    case 'tracestate': x.tracestate = x.tracestate === null ? v : `${x.tracestate},${v}`; break
  }
  x.headers.push([k, v])
}

export class GatewayExchange {
  readonly started = performance.now()
  aborted = false
  ended = false
  status = 0
  // Request head, copied from req.
  readonly method: string
  readonly url: string
  readonly query: string
  readonly headers: Array<[string, string]> = []
  contentLength = -1
  clCount = 0
  te: string | null = null
  teCount = 0
  host = ''
  hostCount = 0
  xff: string | null = null
  xfHost: string | null = null
  xfProto: string | null = null
  requestId: string | null = null
  connection: string | null = null
  contentType: string | undefined = undefined
  authorization: string | undefined = undefined
  clientId: string | undefined = undefined
  profileId: string | undefined = undefined
  hopHeader: string | null = null
  origin: string | null = null
  acceptEncoding: string | null = null
  /** A CORS preflight's Access-Control-Request-Method and -Headers. */
  acrMethod: string | null = null
  acrHeaders: string | null = null
  traceparent: string | null = null
  tracestate: string | null = null
  /** The request's SERVER span (null when tracing is off) and its backend call's CLIENT span. */
  span: Span | null = null
  backendSpan: Span | null = null
  readonly rid: string
  /** The client's address (behind trusted proxies: from X-Forwarded-For). */
  remoteIp: string
  /** The immediate peer: the socket's address, or the TLS listener's client. */
  peerIp: string
  /** The host the client asked for (a trusted proxy's X-Forwarded-Host, else Host). */
  publicHost = ''
  proto: 'http' | 'https' = 'http'
  certFingerprint: string | undefined = undefined
  // Filled in by the stages.
  match: Match | null = null
  principal: Principal | null = null
  /** Rate-limit and quota headers from the access stage, added to every answer. */
  limitHeaders: Array<[string, string]> = NO_HEADERS
  /** The collection's CORS headers for this request's origin (null: the collection has no `cors`). */
  corsHeaders: Array<[string, string]> | null = null
  /** The route compresses: every answer says it varies by Accept-Encoding. */
  varyEncoding = false
  /** The encoding this client gets when the answer is worth compressing (null: identity). */
  encoding: Encoding | null = null
  /** The response cache's stage of a miss this request forwards for (null: nothing is stored). */
  cacheSink: CacheSink | null = null
  /** Cache-Status (RFC 9211) of this answer, on every answer of a cached proxy. */
  cacheStatus: string | null = null
  /** The access decision still pending (an async authenticator or limiter), or null. */
  gate: Promise<AppError | null> | null = null
  /** The backend exchange while forwarding (aborted with the client). */
  upstream: Exchange | null = null
  /** The balanced upstream's target this request went to last (its URL, for failure logs); null: the route's one backend. */
  target: string | null = null
  /** Set on an `Upgrade: websocket` request: accepts it once the backend has (websocket/relay.ts). */
  accept: AcceptUpgrade | null = null
  /** The node layer's counterpart of `accept`: takes the client's connection to relay its bytes (websocket/tunnel.ts). */
  take: TakeConnection | null = null
  upstreamStart = 0
  bytesIn = 0
  bytesOut = 0
  private failureLogged = false
  /** Answered by the gateway itself (x.fail), for the refused-traffic metric. */
  private refused = false

  constructor (readonly ctx: GatewayContext, readonly res: GatewayResponse, req: GatewayRequest) {
    ctx.inFlight++
    res.onAborted(() => { this.aborted = true; this.upstream?.abort(); this.release() })
    // Everything needed from `req` is copied now: it is invalid after this callback returns.
    this.method = req.getCaseSensitiveMethod()
    this.url = req.getUrl()
    this.query = req.getQuery() ?? ''
    reading = this
    req.forEach(readHeader)
    this.rid = this.requestId ?? randomUUID()
    const hop = this.hopHeader === null ? null : ctx.verifyHop(this.hopHeader)
    if (hop !== null) { this.proto = 'https'; this.peerIp = hop.remoteIp; this.certFingerprint = hop.fingerprint ?? undefined } else this.peerIp = peerAddress(res)
    this.remoteIp = this.peerIp
    this.publicHost = this.host
    if (ctx.trusted.trusts(this.peerIp)) {
      this.remoteIp = ctx.trusted.clientAddress(this.peerIp, this.xff)
      if (this.xfHost !== null) this.publicHost = this.xfHost
      if (this.xfProto === 'https' || this.xfProto === 'http') this.proto = this.xfProto
    }
    if (ctx.tracer !== null) this.span = ctx.tracer.startFromHeaders(this.traceparent, this.tracestate, this.method, KIND.server)
  }

  /** The trace id the access line, request record and error bodies carry (null when tracing is off). */
  get traceId (): string | null { return this.span === null ? null : this.span.traceId }

  get hasBody (): boolean { return this.contentLength > 0 || this.te === 'chunked' }
  get closed (): boolean { return this.aborted || this.ended }

  /**
   * The one writer of response heads (backend answers, workflow answers, gateway errors): status,
   * the answer's headers minus connection-level ones, a default content type when the answer has
   * none, then X-Request-ID and the policy's limit headers. Call inside res.cork.
   */
  writeHead (status: number, statusText: string, headers: Iterable<[string, string]>, defaultType: string | null): void {
    const res = this.res
    res.writeStatus(statusText === '' ? `${status}` : `${status} ${statusText}`)
    let typed = false
    const cors = this.corsHeaders
    for (const [k, v] of headers) {
      if (DROP_RESPONSE.has(k)) continue
      // With the collection's CORS on, the gateway alone speaks CORS (a backend's own would contradict it).
      if (cors !== null && k.startsWith('access-control-')) continue
      if (k === 'content-type') typed = true
      res.writeHeader(k, v)
    }
    if (!typed && defaultType !== null) res.writeHeader('content-type', defaultType)
    res.writeHeader('x-request-id', this.rid)
    const limits = this.limitHeaders
    // i < length in both loops.
    for (let i = 0; i < limits.length; i++) res.writeHeader(limits[i]![0], limits[i]![1])
    if (cors !== null) for (let i = 0; i < cors.length; i++) res.writeHeader(cors[i]![0], cors[i]![1])
    if (this.varyEncoding) res.writeHeader('vary', 'Accept-Encoding')
    if (this.cacheStatus !== null) res.writeHeader('cache-status', this.cacheStatus)
  }

  /** Answers with a gateway error (unless the answer is already over) and finishes. */
  fail (err: AppError): void {
    if (this.closed) return
    this.status = err.status
    const body = JSON.stringify(errorBody(err, this.span === null ? { request_id: this.rid } : { request_id: this.rid, trace_id: this.span.traceId }))
    // A client sending a refused body is cut off; the TLS relay is not (it must read the answer, and the rest is discarded).
    const close = (err.status === 400 || err.status === 413) && this.proto === 'http'
    const answer = (): void => {
      if (this.aborted) return
      this.res.cork(() => {
        this.writeHead(err.status, '', err.headers === undefined ? NO_HEADERS : Object.entries(err.headers), 'application/json')
        this.res.end(body, close)
      })
    }
    // Desync guard: answered inside the handler, uWS would close only after parsing the rest of
    // the read, so bytes pipelined behind a refused request would run as a request of their own.
    // Left pending for one turn, any such bytes make uWS close the connection unanswered instead.
    if (close) setImmediate(answer)
    else answer()
    this.refused = true
    this.finish(null)
  }

  /** Runs `go` once the access decision allows it (at once when it was decided synchronously). */
  afterGate (go: () => void): void {
    if (this.gate === null) { go(); return }
    this.gate.then(err => {
      if (this.closed) return
      if (err !== null) this.fail(err)
      else go()
    })
  }

  /**
   * Why a request ended in a 502, 504 or failed workflow run, at warn and once per request (the
   * access line carries only the status). Names the route and the backend's origin, never
   * headers, query or credentials.
   */
  warnFailure (status: number, reason: string, data: Record<string, unknown> = {}): void {
    if (this.failureLogged) return
    this.failureLogged = true
    const route = this.match?.route
    const up = route?.upstream
    this.ctx.logger.warn({
      request_id: this.rid, method: this.method, path: this.url, status, route: route?.name ?? null,
      collection_id: route?.collection.id, proxy_id: route?.proxy.id,
      upstream: route === undefined ? null : route.workflow !== null ? 'workflow' : this.target !== null ? this.target : `${up!.protocol}//${up!.hostHeader}`, ...data
    }, reason)
  }

  /** The request is over: access log, request record, in-flight count. Runs once. */
  finish (route: string | null, upstreamMs?: number): void {
    if (this.ended) return
    this.release()
    const ms = Math.round((performance.now() - this.started) * 100) / 100
    const { ctx, rid, method, url, status } = this
    const traceId = this.span === null ? null : this.span.traceId
    if (traceId !== null) endRequestSpans(this)
    ctx.access({ request_id: rid, trace_id: traceId, method, path: url, route, status, upstream_ms: upstreamMs, ms })
    if (ctx.observe !== undefined) {
      const route = this.match?.route
      ctx.observe({
        time: Date.now(), request_id: rid, collection_id: route?.collection.id ?? null, proxy_id: route?.proxy.id ?? null,
        client_id: this.principal?.client_id ?? null, profile_id: this.principal?.profile_id ?? null, method, path: url, status,
        duration_ms: ms, upstream_ms: upstreamMs ?? null, bytes_in: this.bytesIn, bytes_out: this.bytesOut, refused: this.refused,
        // Only a sampled trace can be opened in a tracing backend: the record names no other.
        trace_id: traceId !== null && this.span!.sampled ? traceId : null
      })
    }
  }

  private release (): void {
    if (this.ended) return
    this.ended = true
    const ctx = this.ctx
    ctx.inFlight--
    if (ctx.inFlight === 0 && ctx.draining !== null) ctx.draining()
  }
}
