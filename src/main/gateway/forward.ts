/**
 * Forward stage: sends the request to the route's backend over a keep-alive
 * pool and relays the answer. Small answers (known length up to 64 KiB) are
 * gathered and written in one corked call with Content-Length; others stream,
 * with backpressure both ways (a slow client pauses the backend socket).
 *
 *   forward() ─> pool.request(head, body) ─> onHead ─┬─ small: gather ─> onEnd: head + body in one write
 *                                                    └─ else: head now, onBody: tryEnd/write (onWritable)
 */
import { badGateway, gatewayTimeout } from '../../common/errors.js'
import type { GatewayExchange } from './exchange.js'
import { buildRequestHead, buildTargetPath, type ClientRequestInfo } from './request-head.js'
import type { ResponseHead } from './response-parser.js'
import type { ExchangeEvents, ExchangeFailure } from './upstream.js'
import { startBackendSpan } from './spans.js'
import { forwardBalanced } from './upstreams/balanced-forward.js'
import { GatherRelay } from './responses/gather-relay.js'

// Answers up to this size are gathered and written in one corked call with Content-Length.
const SMALL_BODY = 64 * 1024

/** Sends the request upstream (query already validated); the body is whole, or null when absent or streamed. */
export function forward (x: GatewayExchange, query: string, body: Buffer | null): void {
  const { route, params, tail } = x.match!
  const { config } = x.ctx
  const target = buildTargetPath(route, params, tail) + (query !== '' ? `?${query}` : '')
  const hasBody = x.hasBody
  const info: ClientRequestInfo = {
    method: x.method, headers: x.headers, host: x.publicHost, xff: x.xff, remoteIp: x.peerIp, clientIp: x.remoteIp, proto: x.proto, requestId: x.rid,
    // A balanced upstream's attempts each start their own span (upstreams/balanced-forward.ts).
    traceparent: x.span === null || route.balanced !== null ? null : startBackendSpan(x, target), tracestate: x.span?.state ?? null,
    connectionTokens: x.connection === null ? null : x.connection.split(',').map(s => s.trim()).filter(s => s !== 'close' && s !== 'keep-alive')
  }
  const timeoutMs = route.timeoutMs ?? config.UPSTREAM_TIMEOUT_MS
  // Several targets (or health checks, caps, retries): upstreams/. One IP target: straight on below.
  if (route.balanced !== null) {
    forwardBalanced(route.balanced, { x, query, body, info, timeoutMs, connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS, relay: relayFor(x, timeoutMs) })
    return
  }
  const pool = x.ctx.upstream.pool(route.upstream.hostname, route.upstream.port, route.upstream.protocol === 'https:')
  x.upstreamStart = performance.now()
  x.upstream = pool.request({
    head: buildRequestHead(route, info, target, body !== null ? body.length : (hasBody ? (x.contentLength >= 0 ? x.contentLength : 'chunked') : 0)),
    body,
    streamingBody: body === null && hasBody,
    noResponseBody: x.method === 'HEAD',
    retryable: body !== null || !hasBody,
    connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
    responseTimeoutMs: timeoutMs,
    events: relayFor(x, timeoutMs)
  })
}

/** Answers the gateway may transform (compress, cache) go through GatherRelay; the rest are relayed as they come. */
function relayFor (x: GatewayExchange, timeoutMs: number): ExchangeEvents {
  return x.encoding !== null || x.cacheSink !== null ? new GatherRelay(x, timeoutMs) : new Relay(x, timeoutMs)
}

/** The warn line of an answer cut after it started. */
export const cutReason = (kind: ExchangeFailure): string => kind === 'stalled'
  ? 'client stopped reading mid-answer: connections to the client and the backend cut'
  : 'backend failed mid-answer: connection to the client cut'

/** Relays the backend's answer to the client: one object per request instead of a closure per event. */
export class Relay implements ExchangeEvents {
  private small: Buffer[] | null = null
  private totalLength = -1
  private pending: Buffer | null = null
  private pendingOffset = 0
  private headWritten = false
  private head: ResponseHead | null = null
  private readonly routeName: string

  constructor (private readonly x: GatewayExchange, private readonly timeoutMs: number) {
    this.routeName = x.match!.route.name
  }

  onHead (h: ResponseHead, framing: 'none' | 'length' | 'chunked' | 'close', length: number): void {
    const x = this.x
    if (x.aborted) return
    x.status = h.status
    this.head = h
    if (framing === 'length' && length <= SMALL_BODY && !x.match!.route.streaming) { this.small = []; this.totalLength = length; return }
    this.totalLength = framing === 'length' ? length : -1
    x.res.cork(() => {
      this.writeHead(h)
      if (framing === 'none') {
        if (x.method === 'HEAD') {
          const cl = h.headers.find(e => e[0] === 'content-length')
          x.res.endWithoutBody(cl !== undefined ? Number(cl[1]) : undefined)
        } else x.res.end()
      }
    })
  }

  onBody (chunk: Buffer): void {
    const x = this.x
    if (x.aborted) return
    x.bytesOut += chunk.length
    // Chunks are views of the upstream read buffer (valid during this call): gathered as copies.
    if (this.small !== null) { this.small.push(Buffer.from(chunk)); return }
    x.res.cork(() => this.stream(chunk))
  }

  onEnd (): void {
    const x = this.x
    if (x.aborted) { x.finish(this.routeName); return }
    const small = this.small
    if (small !== null) {
      const body = small.length === 1 ? small[0] : Buffer.concat(small)
      const h = this.head!
      x.res.cork(() => { this.writeHead(h); x.res.end(body) })
    } else if (this.totalLength < 0 && this.headWritten) x.res.cork(() => { x.res.end() })
    x.finish(this.routeName, Math.round(performance.now() - x.upstreamStart))
  }

  onError (kind: ExchangeFailure, err: Error): void {
    const x = this.x
    if (x.aborted) { x.finish(this.routeName); return }
    if (this.headWritten || (this.head !== null && this.small === null)) {
      // The answer already started: all we can do is cut the connection.
      x.status = x.status || 502
      x.warnFailure(x.status, cutReason(kind), { kind, error: err.message })
      x.res.cork(() => x.res.close())
      x.finish(this.routeName)
      return
    }
    x.warnFailure(kind === 'timeout' ? 504 : 502, kind === 'timeout'
      ? `backend timeout: no answer within ${this.timeoutMs} ms`
      : kind === 'connect' ? 'backend unreachable' : 'backend gave an invalid answer', { kind, error: err.message })
    x.fail(kind === 'timeout'
      ? gatewayTimeout(`The backend did not answer within ${this.timeoutMs} ms.`)
      : badGateway(kind === 'connect' ? 'The backend could not be reached.' : 'The backend gave an invalid answer.'))
  }

  private writeHead (h: ResponseHead): void {
    this.x.writeHead(h.status, h.statusText, h.headers, null)
    this.headWritten = true
  }

  /** Writes one chunk of a large or unframed answer; pauses the backend while the client is slow. */
  private stream (chunk: Buffer): void {
    const x = this.x
    const res = x.res
    if (x.aborted) return
    if (this.totalLength >= 0) {
      const off = res.getWriteOffset()
      const [ok, fin] = res.tryEnd(chunk, this.totalLength)
      if (!ok && !fin) {
        // The chunk is a view of the upstream read buffer, reused by the next read: keep a copy.
        this.pending = Buffer.from(chunk)
        this.pendingOffset = off
        x.upstream?.pause()
        res.onWritable(o => {
          if (this.pending === null) return true
          const [ok2, fin2] = res.tryEnd(this.pending.subarray(o - this.pendingOffset), this.totalLength)
          if (ok2 || fin2) { this.pending = null; x.upstream?.resume() } else x.upstream?.progress()
          return ok2
        })
      }
    } else if (!res.write(chunk)) {
      x.upstream?.pause()
      res.onWritable(() => { x.upstream?.resume(); return true })
    }
  }
}
