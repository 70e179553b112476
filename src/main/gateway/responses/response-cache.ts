/**
 * The response cache of proxies with `cache`: the cache stage of the request path, the misses
 * in flight (collapsed: one backend request per key, whoever asks meanwhile waits for it), and
 * the counts /metrics shows.
 *
 *   GET/HEAD ─> key (path, query, the proxy's vary headers, the client unless shared)
 *     ├─ fresh entry ───────────────> hit: sendWhole (Age, Cache-Status: hit), no backend call
 *     ├─ a miss for the key in flight > wait: its stored answer (collapsed), else forward alone
 *     └─ miss or stale ─────────────> forward as the flight's leader; the relay hands the answer
 *                                      to MissSink: stored when it may be (Cache-Control,
 *                                      Expires, size), waiters served from it
 *   other methods ─> forwarded (Cache-Status: fwd=bypass)
 */
import type { GatewayExchange } from '../exchange.js'
import { endCacheSpan, startCacheSpan } from '../spans.js'
import type { Span } from '../../observability/tracing/span.js'
import type { ResponseHead } from '../response-parser.js'
import type { CacheSink } from './cache-sink.js'
import { freshnessMs, storedHeaders, varyNames, varyPart } from './cache-policy.js'
import type { CachedAnswer, ResponseStore } from './cache-store.js'
import { sendWhole, type EncodedMemo } from './whole-answer.js'

/** A route's cache settings, compiled with the route. `tag` changes with any configuration change of it. */
export interface CompiledCache { ttlS: number, vary: string[], shared: boolean, tag: string }

export const BYPASS = 'gatehouse; fwd=bypass'

interface Waiter { x: GatewayExchange, go: () => void }
interface Counts { hit: number, miss: number, stored: number }

export class ResponseCache {
  readonly flights = new Map<string, MissSink>()
  private readonly counts = new Map<string, Counts>()

  /** `onCount`: where a gateway thread's counts go instead (the main thread's /metrics adds them). */
  constructor (readonly store: ResponseStore, readonly maxEntryBytes: number, private readonly onCount?: (proxyId: string, what: keyof Counts) => void) {}

  /** Drops a proxy's entries: this instance's memory, or Redis (then for every instance). */
  async purge (proxyId: string): Promise<void> { await this.store.purge(proxyId) }

  /** Drops what this instance keeps in memory for the proxy (a purge or change elsewhere). */
  dropLocal (proxyId: string): void { if (this.store.kind === 'memory') void this.store.purge(proxyId) }

  count (proxyId: string, what: keyof Counts): void {
    if (this.onCount !== undefined) { this.onCount(proxyId, what); return }
    let c = this.counts.get(proxyId)
    if (c === undefined) this.counts.set(proxyId, c = { hit: 0, miss: 0, stored: 0 })
    c[what]++
  }

  /** Adds a gateway thread's counts (sent with its request records). */
  add (proxyId: string, hit: number, miss: number, stored: number): void {
    let c = this.counts.get(proxyId)
    if (c === undefined) this.counts.set(proxyId, c = { hit: 0, miss: 0, stored: 0 })
    c.hit += hit
    c.miss += miss
    c.stored += stored
  }

  prometheus (): string {
    const lines = [
      '# HELP gatehouse_response_cache_requests_total GET and HEAD requests to proxies with a response cache, by proxy and result (hit: served from the cache).',
      '# TYPE gatehouse_response_cache_requests_total counter'
    ]
    let hits = 0
    let all = 0
    const stored: string[] = []
    for (const [id, c] of this.counts) {
      lines.push(`gatehouse_response_cache_requests_total{proxy_id="${id}",result="hit"} ${c.hit}`, `gatehouse_response_cache_requests_total{proxy_id="${id}",result="miss"} ${c.miss}`)
      stored.push(`gatehouse_response_cache_stored_total{proxy_id="${id}"} ${c.stored}`)
      hits += c.hit
      all += c.hit + c.miss
    }
    lines.push('# HELP gatehouse_response_cache_stored_total Answers stored by this instance, by proxy.', '# TYPE gatehouse_response_cache_stored_total counter', ...stored)
    lines.push('# HELP gatehouse_response_cache_hit_ratio Hits over all cacheable requests on this instance since it started.', '# TYPE gatehouse_response_cache_hit_ratio gauge',
      `gatehouse_response_cache_hit_ratio ${all === 0 ? 0 : Math.round(hits / all * 10000) / 10000}`)
    lines.push(`# HELP gatehouse_response_cache_bytes Bytes the response cache holds in this process's memory (0 with CACHE_TYPE=redis: entries are in Redis).`, '# TYPE gatehouse_response_cache_bytes gauge',
      `gatehouse_response_cache_bytes ${this.store.bytes()}`)
    lines.push('# HELP gatehouse_response_cache_entries Entries the response cache holds in this process\'s memory.', '# TYPE gatehouse_response_cache_entries gauge',
      `gatehouse_response_cache_entries ${this.store.entries()}`)
    return lines.join('\n') + '\n'
  }
}

/** The cache stage: a fresh entry answers; otherwise `go` forwards (or runs the workflow). */
export function serveCached (x: GatewayExchange, c: CompiledCache, query: string, go: () => void): void {
  if (x.method !== 'GET' && x.method !== 'HEAD') { go(); return }
  const span = x.span === null ? null : startCacheSpan(x, x.ctx.responseCache.store.kind)
  lookup(x, c, query, go, span).catch((err: unknown) => {
    if (span !== null) endCacheSpan(x, span, null, err instanceof Error ? err.message : String(err))
    x.ctx.logger.error({ err, request_id: x.rid }, 'response cache lookup failed; forwarded')
    if (!x.closed) go()
  })
}

/** `span`: the lookup's span when traced, ended once the cache has decided (hit, miss or stale). */
async function lookup (x: GatewayExchange, c: CompiledCache, query: string, go: () => void, span: Span | null): Promise<void> {
  const cache = x.ctx.responseCache
  const proxyId = x.match!.route.proxy.id
  const base = baseKey(x, c, query)
  let key = base
  let fwd = 'uri-miss'
  let entry = await cache.store.get(proxyId, base)
  if (entry !== null && entry.kind === 'vary') {
    if (entry.expiresAt <= Date.now()) entry = null
    else {
      key = variantKey(base, x.headers, entry.vary)
      entry = await cache.store.get(proxyId, key)
      if (entry === null) fwd = 'vary-miss'
    }
  }
  if (x.closed) { if (span !== null) endCacheSpan(x, span, null, 'the client went away'); return }
  if (entry !== null && entry.kind === 'answer') {
    const left = entry.expiresAt - Date.now()
    if (left > 0) {
      if (span !== null) endCacheSpan(x, span, 'hit', null)
      cache.count(proxyId, 'hit')
      serveEntry(x, entry, `gatehouse; hit; ttl=${Math.ceil(left / 1000)}`)
      return
    }
    fwd = 'stale'
  }
  if (span !== null) endCacheSpan(x, span, fwd, null)
  cache.count(proxyId, 'miss')
  x.cacheStatus = `gatehouse; fwd=${fwd}`
  // A HEAD miss is forwarded as it is: it has no body to keep.
  if (x.method === 'HEAD') { go(); return }
  const flightKey = `${proxyId}\n${base}`
  const flight = cache.flights.get(flightKey)
  if (flight !== undefined) { flight.wait({ x, go }); return }
  const sink = new MissSink(x, c, base, flightKey, fwd)
  cache.flights.set(flightKey, sink)
  x.cacheSink = sink
  go()
}

function serveEntry (x: GatewayExchange, e: CachedAnswer, status: string): void {
  x.cacheStatus = status
  const headers = e.headers.slice()
  headers.push(['age', String(Math.max(0, Math.floor((Date.now() - e.storedAt) / 1000)))])
  sendWhole(x, { status: e.status, statusText: e.statusText, headers, body: e.body }, undefined, e.memo)
}

/** Path and query, the proxy's vary headers, and the client unless the answers are shared. */
function baseKey (x: GatewayExchange, c: CompiledCache, query: string): string {
  const route = x.match!.route
  const who = route.collection.auth_required && !c.shared ? `${x.principal?.client_id ?? ''}/${x.principal?.profile_id ?? ''}` : '*'
  return `${c.tag}\n${x.url}?${query}\n${c.vary.length > 0 ? varyPart(x.headers, c.vary) : ''}\n${who}`
}

const variantKey = (base: string, headers: ReadonlyArray<[string, string]>, vary: readonly string[]) => `${base}\n${varyPart(headers, vary)}`

/** The leader of a miss: receives the backend's answer, stores it when it may, then serves or frees the waiters. */
class MissSink implements CacheSink {
  private readonly waiters: Waiter[] = []
  private done = false
  private freshMs = -1
  // A leader that never hears back (client gone, backend silent) frees its waiters anyway.
  private readonly timer: NodeJS.Timeout

  constructor (private readonly x: GatewayExchange, private readonly c: CompiledCache, private readonly base: string, private readonly flightKey: string, private readonly fwd: string) {
    const route = x.match!.route
    this.timer = setTimeout(() => { this.decline() }, (route.timeoutMs ?? x.ctx.config.UPSTREAM_TIMEOUT_MS) + 1000)
    this.timer.unref()
  }

  wait (w: Waiter): void { this.waiters.push(w) }

  accepts (h: ResponseHead, framing: 'none' | 'length' | 'chunked' | 'close', length: number): number {
    const max = this.x.ctx.responseCache.maxEntryBytes
    if (this.done || (framing === 'length' && length > max)) return -1
    this.freshMs = freshnessMs(h, this.c.ttlS, Date.now())
    return this.freshMs > 0 ? max : -1
  }

  store (h: ResponseHead, body: Buffer): EncodedMemo | null {
    if (this.done || this.freshMs <= 0) { this.decline(); return null }
    this.end()
    const x = this.x
    const cache = x.ctx.responseCache
    const proxyId = x.match!.route.proxy.id
    const now = Date.now()
    const answer: CachedAnswer = { kind: 'answer', status: h.status, statusText: h.statusText, headers: storedHeaders(h.headers), body, storedAt: now, expiresAt: now + this.freshMs, memo: new Map() }
    const vary = varyNames(h.headers)
    let key = this.base
    if (vary.length > 0) {
      cache.store.set(proxyId, this.base, { kind: 'vary', vary, expiresAt: answer.expiresAt })
      key = variantKey(this.base, x.headers, vary)
    }
    cache.store.set(proxyId, key, answer)
    cache.count(proxyId, 'stored')
    x.cacheStatus = `gatehouse; fwd=${this.fwd}; stored`
    for (const w of this.waiters) {
      if (w.x.closed) continue
      if (vary.length === 0 || variantKey(this.base, w.x.headers, vary) === key) serveEntry(w.x, answer, `gatehouse; fwd=${this.fwd}; collapsed`)
      else { w.x.cacheStatus = 'gatehouse; fwd=vary-miss'; w.go() }
    }
    return answer.memo
  }

  decline (): void {
    if (this.done) return
    this.end()
    // Not stored: each waiter asks the backend for itself (its answer may be private to it).
    for (const w of this.waiters) if (!w.x.closed) w.go()
  }

  private end (): void {
    this.done = true
    clearTimeout(this.timer)
    const flights = this.x.ctx.responseCache.flights
    if (flights.get(this.flightKey) === this) flights.delete(this.flightKey)
  }
}
