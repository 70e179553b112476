/**
 * Forwarding to a balanced upstream: attempts on endpoints the set picks, retried where safe,
 * relaying the one answer that is kept through forward.ts's Relay.
 *
 *   pick ─> attempt ─┬─ answer (not 502/503/504, or no retry left) ─> Relay (committed: never retried after)
 *                    ├─ not sent (no connection) ─────────────────────> next endpoint, any method
 *                    └─ 502/503/504 or cut after sending ─────────────> next endpoint when idempotent,
 *                                                                       retries.attempts and the budget allow
 * Never retried: a streamed request body (it cannot be replayed), a timeout, anything once the
 * answer went to the Relay. A buffered body is replayed as the same bytes.
 */
import { badGateway, serviceUnavailable } from '../../../common/errors.js'
import type { GatewayExchange } from '../exchange.js'
import { buildRequestHead, buildTargetPath, type ClientRequestInfo } from '../request-head.js'
import type { ResponseHead } from '../response-parser.js'
import type { ExchangeEvents } from '../upstream.js'
import type { AbortAwareEvents, Endpoint } from './endpoint.js'
import { passiveFailure, passiveSuccess } from './health.js'
import { endAttemptSpan, startAttemptSpan } from '../spans.js'
import type { Span } from '../../observability/tracing/span.js'
import type { UpstreamSet } from './upstream-set.js'

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
const RETRY_STATUS = new Set([502, 503, 504])

export interface ForwardJob {
  x: GatewayExchange
  query: string
  body: Buffer | null
  info: ClientRequestInfo
  timeoutMs: number
  connectTimeoutMs: number
  relay: ExchangeEvents
}

/** Sends the request to the set's pick; the Relay hears only the answer kept. */
export function forwardBalanced (set: UpstreamSet, job: ForwardJob): void {
  const req = new BalancedRequest(set, job)
  if (!req.next(false)) job.x.fail(badGateway('The backend could not be reached.'))
}

class BalancedRequest {
  /** The answer reached the Relay: from here on the request is never retried. */
  committed = false
  private sentRetries = 0
  /** Attempts started so far (the backend call's span counts the resends). */
  private attempts = 0
  private readonly replayable: boolean
  private readonly idempotent: boolean

  constructor (readonly set: UpstreamSet, readonly job: ForwardJob) {
    this.replayable = job.body !== null || !job.x.hasBody
    this.idempotent = IDEMPOTENT.has(job.x.method)
    set.budget.request(Date.now())
    job.x.upstreamStart = performance.now()
  }

  /**
   * Starts the next attempt (`again`: a retry after sending, which may go back to a tried
   * endpoint). False when no endpoint is left to try; answered 503 when all are at their cap.
   */
  next (again: boolean): boolean {
    const x = this.job.x
    if (x.aborted) return false
    const e = this.set.pick(x, this, again)
    if (e === 'capped') {
      x.warnFailure(503, 'every upstream target is at max_in_flight_per_target', { collection_id: this.set.collection.id })
      x.fail(serviceUnavailable('Every backend of this API is at its limit of requests in flight; retry shortly.', 1))
      return true
    }
    if (e === null) return false
    e.triedBy = this
    e.inFlight++
    x.target = e.target.url
    const { route, params, tail } = x.match!
    const t = e.target
    const path = buildTargetPath(route, params, tail, t.basePath) + (this.job.query !== '' ? `?${this.job.query}` : '')
    const { body, timeoutMs, connectTimeoutMs } = this.job
    let info = this.job.info
    let span: Span | null = null
    // Traced: each attempt is its own CLIENT span, and the backend gets that attempt's traceparent.
    if (x.span !== null) {
      info = { ...info, traceparent: startAttemptSpan(x, t, path, this.attempts) }
      span = x.backendSpan
    }
    this.attempts++
    x.upstream = e.pool.request({
      head: buildRequestHead(route, info, path, body !== null ? body.length : (x.hasBody ? (x.contentLength >= 0 ? x.contentLength : 'chunked') : 0), t.hostHeader),
      body,
      streamingBody: body === null && x.hasBody,
      noResponseBody: x.method === 'HEAD',
      retryable: this.replayable,
      connectTimeoutMs,
      responseTimeoutMs: timeoutMs,
      events: new Attempt(this, e, span)
    })
    return true
  }

  /** A retry after the request was (maybe) sent: idempotent, replayable, asked for, within budget. */
  mayRetrySent (): boolean {
    if (!this.idempotent || !this.replayable || this.sentRetries >= this.set.settings.retries.attempts) return false
    if (!this.set.budget.tryRetry(Date.now())) return false
    this.sentRetries++
    return true
  }

  /** A retry of a request that never left: any method, to an endpoint not tried yet. */
  mayRetryUnsent (): boolean { return this.replayable && !this.job.x.aborted }
}

/** One attempt's events: decides retry or relay, and keeps the endpoint's counts. */
class Attempt implements ExchangeEvents, AbortAwareEvents {
  private released = false
  private dropped = false

  constructor (private readonly req: BalancedRequest, private readonly e: Endpoint, private readonly span: Span | null) {}

  onHead (h: ResponseHead, framing: 'none' | 'length' | 'chunked' | 'close', length: number): void {
    if (this.dropped) return
    const req = this.req
    if (RETRY_STATUS.has(h.status)) {
      passiveFailure(req.set.scope, this.e, `answered ${h.status}`, Date.now())
      if (req.mayRetrySent()) {
        // Dropped before a byte went to the client; the connection is closed rather than drained.
        this.dropped = true
        if (this.span !== null) endAttemptSpan(req.job.x, this.span, h.status, String(h.status))
        this.release()
        req.job.x.upstream?.abort()
        if (req.next(true)) return
        this.dropped = false
        this.released = true
        req.job.relay.onError('protocol', new Error(`answered ${h.status} and no other target could take the retry`))
        return
      }
    } else passiveSuccess(req.set.scope, this.e)
    req.committed = true
    req.job.relay.onHead(h, framing, length)
  }

  onBody (chunk: Buffer): void { if (!this.dropped) this.req.job.relay.onBody(chunk) }

  onEnd (): void {
    if (this.dropped) return
    this.release()
    this.req.job.relay.onEnd()
  }

  onError (kind: 'connect' | 'timeout' | 'protocol', err: Error): void {
    if (this.dropped) return
    this.release()
    const req = this.req
    passiveFailure(req.set.scope, this.e, kind === 'connect' ? `connection failed: ${err.message}` : kind === 'timeout' ? 'timed out' : `connection cut: ${err.message}`, Date.now())
    if (!req.committed) {
      const retry = (kind === 'connect' && req.mayRetryUnsent()) || (kind === 'protocol' && req.mayRetrySent())
      if (retry && this.span !== null) endAttemptSpan(req.job.x, this.span, 0, kind)
      if (retry && req.next(kind === 'protocol')) return
    }
    // The attempt whose failure the client hears: its span says why ('connect', 'timeout', 'protocol').
    if (this.span !== null && this.span.sampled && req.job.x.backendSpan === this.span) this.span.attributes['error.type'] = kind
    req.job.relay.onError(kind, err)
  }

  /** The client went away: the exchange reports nothing else. */
  onAbort (): void { this.release() }

  private release (): void {
    if (this.released) return
    this.released = true
    this.e.inFlight--
  }
}
