/**
 * Per-proxy and per-client request metrics kept in memory: counters since start
 * (requests, 4xx, 5xx) and latency histograms in one-minute slots, so p50/p95/p99
 * over the last 1, 5 and 15 minutes come from the last N slots. Rendered as JSON
 * for the management API and as Prometheus text at GET /metrics.
 */
import type { RoutingView } from '../routes/reloader.js'
import type { RequestRecord } from '../store/request-record.js'
import { toOpenMetrics } from './open-metrics.js'

/** Statuses the gateway answers by itself, counted by gatehouse_gateway_refused_total{reason}. */
export const REFUSAL_REASONS = ['400', '401', '403', '404', '405', '413', '415', '429', '500', '502', '503', '504']

interface ProxyNames { proxy: string, collection: string, collection_id: string }

// Upper bounds in ms; the last bucket is +Inf.
export const BUCKETS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000]
const SLOTS = 15

interface Series {
  requests: number
  errors4xx: number
  errors5xx: number
  sumMs: number
  /** Cumulative histogram since start (Prometheus). */
  buckets: number[]
  /** Per-minute histograms: slot index = minute % SLOTS, with the minute it holds. */
  slots: Array<{ minute: number, counts: number[] }>
  /** Per bucket, the latest traced request that fell in it (OpenMetrics exemplars); null until one does. */
  exemplars: Array<Exemplar | null> | null
}

/** A request's trace id, duration and time: what OpenMetrics shows beside a histogram bucket. */
interface Exemplar { traceId: string, ms: number, time: number }

const newSeries = (): Series => ({
  requests: 0, errors4xx: 0, errors5xx: 0, sumMs: 0, buckets: new Array(BUCKETS.length + 1).fill(0),
  slots: Array.from({ length: SLOTS }, () => ({ minute: -1, counts: new Array(BUCKETS.length + 1).fill(0) })),
  exemplars: null
})

function bucketOf (ms: number): number {
  for (let i = 0; i < BUCKETS.length; i++) if (ms <= BUCKETS[i]!) return i // i < BUCKETS.length
  return BUCKETS.length
}

export interface WindowStats { requests: number, p50: number | null, p95: number | null, p99: number | null }

export class Metrics {
  private readonly byProxy = new Map<string, Series>()
  private readonly byClient = new Map<string, Series>()
  /** The served configuration (set on each change): names label the series; series of proxies that went are dropped. */
  private routes: Pick<RoutingView, 'proxy' | 'collection'> | null = null
  private readonly refused = new Map<string, number>(REFUSAL_REASONS.map(r => [r, 0]))
  /** More Prometheus text appended to /metrics (trigger metrics). */
  private readonly sources: Array<() => string> = []
  constructor (private readonly now: () => number = Date.now) {}

  record (r: RequestRecord): void {
    const b = bucketOf(r.duration_ms)
    const minute = Math.floor(r.time / 60_000)
    if (r.proxy_id !== null) add(this.byProxy, r.proxy_id, r, b, minute)
    if (r.client_id !== null) add(this.byClient, r.client_id, r, b, minute)
    if (r.refused === true) { const k = String(r.status); this.refused.set(k, (this.refused.get(k) ?? 0) + 1) }
  }

  /**
   * The served configuration: its names label the series, and a proxy that goes takes its series
   * with it (`removed`: the proxies that went; without it every series is checked).
   */
  setRoutes (routes: Pick<RoutingView, 'proxy' | 'collection'>, removed?: readonly string[]): void {
    this.routes = routes
    if (removed !== undefined) for (const id of removed) this.byProxy.delete(id)
    else for (const id of this.byProxy.keys()) if (routes.proxy(id) === undefined) this.byProxy.delete(id)
  }

  private namesOf (id: string): ProxyNames | undefined {
    const p = this.routes?.proxy(id)
    if (p === undefined) return undefined
    return { proxy: p.name, collection: this.routes!.collection(p.collection_id)?.name ?? '', collection_id: p.collection_id }
  }

  snapshot (): { proxies: Record<string, unknown>, clients: Record<string, unknown> } {
    const minute = Math.floor(this.now() / 60_000)
    const view = (m: Map<string, Series>) => Object.fromEntries([...m].map(([id, s]) => {
      const n = m === this.byProxy ? this.namesOf(id) : undefined
      return [id, {
        ...(n !== undefined ? { name: n.proxy, collection: n.collection } : {}),
        requests: s.requests,
        errors: { '4xx': s.errors4xx, '5xx': s.errors5xx },
        latency_ms: { last_1m: windowStats(s, minute, 1), last_5m: windowStats(s, minute, 5), last_15m: windowStats(s, minute, 15) }
      }]
    }))
    return { proxies: view(this.byProxy), clients: view(this.byClient) }
  }

  /**
   * The text format (version 0.0.4), or with `openMetrics` OpenMetrics 1.0 with exemplars: the
   * latest sampled trace beside each duration bucket (only OpenMetrics can carry them).
   */
  prometheus (openMetrics = false): string {
    const out: string[] = []
    const emit = (label: string, m: Map<string, Series>, prefix: string) => {
      // proxy_id="…" plus, for a configured proxy, proxy="<name>",collection="<name>",collection_id="…"
      const labels = (id: string) => {
        const n = m === this.byProxy ? this.namesOf(id) : undefined
        return `${label}="${escapeLabel(id)}"` + (n === undefined ? '' : `,proxy="${escapeLabel(n.proxy)}",collection="${escapeLabel(n.collection)}",collection_id="${escapeLabel(n.collection_id)}"`)
      }
      out.push(`# HELP ${prefix}_requests_total Gateway requests by ${label}.`, `# TYPE ${prefix}_requests_total counter`)
      for (const [id, s] of m) out.push(`${prefix}_requests_total{${labels(id)}} ${s.requests}`)
      out.push(`# HELP ${prefix}_errors_total Gateway error answers by ${label} and class.`, `# TYPE ${prefix}_errors_total counter`)
      for (const [id, s] of m) {
        out.push(`${prefix}_errors_total{${labels(id)},class="4xx"} ${s.errors4xx}`)
        out.push(`${prefix}_errors_total{${labels(id)},class="5xx"} ${s.errors5xx}`)
      }
      out.push(`# HELP ${prefix}_duration_ms Gateway request duration in milliseconds by ${label}.`, `# TYPE ${prefix}_duration_ms histogram`)
      for (const [id, s] of m) {
        let cum = 0
        const l = labels(id)
        // buckets and exemplars have BUCKETS.length + 1 slots (the last is +Inf).
        for (let i = 0; i <= BUCKETS.length; i++) {
          cum += s.buckets[i]!
          const e = openMetrics && s.exemplars !== null ? s.exemplars[i] ?? null : null
          out.push(`${prefix}_duration_ms_bucket{${l},le="${i < BUCKETS.length ? BUCKETS[i] : '+Inf'}"} ${cum}` +
            (e === null ? '' : ` # {trace_id="${e.traceId}"} ${e.ms} ${(e.time / 1000).toFixed(3)}`))
        }
        out.push(`${prefix}_duration_ms_sum{${l}} ${s.sumMs}`, `${prefix}_duration_ms_count{${l}} ${s.requests}`)
      }
    }
    emit('proxy_id', this.byProxy, 'gatehouse_proxy')
    emit('client_id', this.byClient, 'gatehouse_client')
    out.push('# HELP gatehouse_gateway_refused_total Requests the gateway answered itself, by status (authentication, limits, no route, validation, backend failure).',
      '# TYPE gatehouse_gateway_refused_total counter')
    for (const [reason, n] of this.refused) out.push(`gatehouse_gateway_refused_total{reason="${reason}"} ${n}`)
    const text = out.join('\n') + '\n' + this.sources.map(f => f()).join('')
    return openMetrics ? toOpenMetrics(text) : text
  }

  addSource (render: () => string): void {
    this.sources.push(render)
  }
}

/** A Prometheus label value, escaped. */
export const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

function add (m: Map<string, Series>, id: string, r: RequestRecord, b: number, minute: number): void {
  let s = m.get(id)
  if (s === undefined) m.set(id, s = newSeries())
  s.requests++
  if (r.status >= 500) s.errors5xx++
  else if (r.status >= 400) s.errors4xx++
  s.sumMs += r.duration_ms
  // b is a bucket index (bucketOf: 0..BUCKETS.length), and there are SLOTS slots: all in range.
  s.buckets[b]!++
  if (r.trace_id != null) (s.exemplars ??= new Array(BUCKETS.length + 1).fill(null))[b] = { traceId: r.trace_id, ms: r.duration_ms, time: r.time }
  const slot = s.slots[minute % SLOTS]!
  if (slot.minute !== minute) { slot.minute = minute; slot.counts.fill(0) }
  slot.counts[b]!++
}

function windowStats (s: Series, minute: number, width: number): WindowStats {
  const counts = new Array(BUCKETS.length + 1).fill(0)
  for (const slot of s.slots) {
    // counts and slot.counts both have BUCKETS.length + 1 entries.
    if (slot.minute > minute - width && slot.minute <= minute) for (let i = 0; i < counts.length; i++) counts[i] += slot.counts[i]!
  }
  const total = counts.reduce((a, b) => a + b, 0)
  const q = (p: number): number | null => {
    if (total === 0) return null
    const rank = Math.ceil(p * total)
    let cum = 0
    for (let i = 0; i < counts.length; i++) {
      cum += counts[i]
      if (cum >= rank) return i < BUCKETS.length ? BUCKETS[i]! : BUCKETS[BUCKETS.length - 1]! // BUCKETS is a non-empty constant
    }
    return null
  }
  return { requests: total, p50: q(0.5), p95: q(0.95), p99: q(0.99) }
}
