import t from 'tap'
import { Metrics } from '../../../src/main/observability/metrics.js'
import type { RequestRecord } from '../../../src/main/store/request-record.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'

const rec = (time: number, ms: number, status = 200, proxy = 'p1', client: string | null = 'c1'): RequestRecord => ({
  time, request_id: 'r', collection_id: 'c', proxy_id: proxy, client_id: client, profile_id: null, method: 'GET', path: '/x',
  status, duration_ms: ms, upstream_ms: null, bytes_in: 0, bytes_out: 0
})

t.test('percentiles over recent windows, counters, Prometheus text', async t => {
  let now = 10 * 60_000
  const m = new Metrics(() => now)
  // 100 requests this minute: 90 fast (<=5 ms), 9 at 80 ms, 1 at 2 s.
  for (let i = 0; i < 90; i++) m.record(rec(now, 4))
  for (let i = 0; i < 9; i++) m.record(rec(now, 80, 404))
  m.record(rec(now, 2000, 502))
  let s = m.snapshot().proxies.p1 as any
  t.equal(s.requests, 100)
  t.same(s.errors, { '4xx': 9, '5xx': 1 })
  t.same(s.latency_ms.last_1m, { requests: 100, p50: 5, p95: 100, p99: 100 })
  // Three minutes later the old minute has left the 1-minute window but not the 5-minute one.
  now += 3 * 60_000
  m.record(rec(now, 300))
  s = m.snapshot().proxies.p1 as any
  t.same(s.latency_ms.last_1m, { requests: 1, p50: 500, p95: 500, p99: 500 })
  t.equal(s.latency_ms.last_5m.requests, 101)
  now += 20 * 60_000
  s = m.snapshot().proxies.p1 as any
  t.equal(s.latency_ms.last_15m.requests, 0, 'old minutes roll out')
  t.equal(s.latency_ms.last_15m.p99, null)
  t.equal(s.requests, 101, 'counters are since start')
  t.ok((m.snapshot().clients as any).c1)

  const text = m.prometheus()
  t.match(text, /# TYPE gatehouse_proxy_requests_total counter/)
  t.match(text, /gatehouse_proxy_requests_total\{proxy_id="p1"\} 101/)
  t.match(text, /gatehouse_proxy_errors_total\{proxy_id="p1",class="5xx"\} 1/)
  t.match(text, /gatehouse_proxy_duration_ms_bucket\{proxy_id="p1",le="\+Inf"\} 101/)
  t.match(text, /gatehouse_proxy_duration_ms_count\{proxy_id="p1"\} 101/)
  for (const line of text.trim().split('\n')) t.match(line, /^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? [\d.e+-]+)$/, 'exposition line')

  // Label values are escaped so that a strict reader gets the ids back.
  const odd = 'we"ird\\id\nx'
  m.record(rec(now, 7, 200, odd, null))
  const samples = parsePrometheus(m.prometheus())
  t.equal(samples.find(x => x.name === 'gatehouse_proxy_requests_total' && x.labels.proxy_id === odd)?.value, 1, 'escaped label round trip')
  t.equal(samples.find(x => x.name === 'gatehouse_client_requests_total' && x.labels.client_id === 'c1')?.value, 101)
})
