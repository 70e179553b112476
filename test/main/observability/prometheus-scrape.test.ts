/**
 * A real Prometheus (Debian's `prometheus` package, installed by scripts/test-services.sh)
 * scrapes the management listener's /metrics on loopback: it negotiates OpenMetrics, parses
 * every line, and its query API answers the gateway's series, the tracing drop counter (the
 * collector here is down) and exemplars carrying the trace ids the backend received.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { createTempDir } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { freePort } from '../../helpers/ports.js'
import { startService } from '../workflows/service.js'

t.setTimeout(300_000)

async function startPrometheus (t: Test, target: string): Promise<string> {
  const dir = await createTempDir(t)
  const port = await freePort()
  await fs.writeFile(path.join(dir, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
    'scrape_configs:', '  - job_name: gatehouse', '    metrics_path: /metrics', '    static_configs:', `      - targets: ['${target}']`, ''
  ].join('\n'))
  const child = spawn('prometheus', [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--enable-feature=exemplar-storage', '--log.level=warn'
  ], { stdio: ['ignore', 'ignore', 'inherit'] })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    child.kill('SIGTERM')
    await new Promise(resolve => child.once('exit', resolve))
  })
  return `http://127.0.0.1:${port}`
}

/** Polls a Prometheus API path until `ok` holds over its data (the scrape runs every second). */
async function until (base: string, apiPath: string, ok: (data: any) => boolean, what: string): Promise<any> {
  let last: unknown
  for (let i = 0; i < 240; i++) {
    try {
      const r = await fetch(base + apiPath, { headers: { connection: 'close' } })
      if (r.ok) {
        last = ((await r.json()) as { data: unknown }).data
        if (ok(last)) return last
      }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  throw new Error(`Prometheus never answered ${what}; last: ${JSON.stringify(last)}`)
}

t.test('Prometheus scrapes /metrics and answers queries on the gateway series, drops and exemplars', async t => {
  const backend = await startBackend(t)
  // The collector is down: every span is dropped, and counted.
  const w = await startService(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' })
  const c = (await w.api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false }, 'admin')).body
  const p = (await w.api('POST', '/proxies', { collection_id: c.id, name: 'items', methods: ['GET'], path: '/items', status: 'published' }, 'admin')).body
  const send = async () => {
    const r = await fetch(`${w.gateway}/shop/items`, { headers: { connection: 'close' } })
    t.equal(r.status, 200)
    await r.text()
  }
  for (let i = 0; i < 5; i++) await send()
  const traces = new Set(backend.seen.map(s => String(s.headers.traceparent).split('-')[1]))

  const prom = await startPrometheus(t, `127.0.0.1:${w.s.managementPort}`)
  const up = await until(prom, '/api/v1/query?query=' + encodeURIComponent('up{job="gatehouse"}'), d => d.result?.[0]?.value?.[1] === '1', 'up == 1')
  t.equal(up.result[0].value[1], '1', 'the scrape succeeds: every line of the exposition parsed')
  const q = encodeURIComponent(`gatehouse_proxy_requests_total{proxy_id="${p.id as string}"}`)
  const requests = await until(prom, `/api/v1/query?query=${q}`, d => Number(d.result?.[0]?.value?.[1]) >= 5, 'the proxy request counter')
  t.match(requests.result[0].metric, { proxy: 'items', collection: 'shop', job: 'gatehouse' }, 'labelled by name')
  t.equal(Number(requests.result[0].value[1]), 5)
  const dropped = await until(prom, '/api/v1/query?query=' + encodeURIComponent('gatehouse_tracing_spans_dropped_total{reason="export_failed"}'), d => Number(d.result?.[0]?.value?.[1]) > 0, 'the span drop counter')
  t.ok(Number(dropped.result[0].value[1]) > 0, 'spans the down collector cost are counted')

  // More traffic while Prometheus scrapes: exemplars are kept from the first scrape that sees them.
  for (let i = 0; i < 5; i++) await send()
  for (const s of backend.seen) traces.add(String(s.headers.traceparent).split('-')[1])
  const now = Date.now() / 1000
  const ex = await until(prom, `/api/v1/query_exemplars?query=${encodeURIComponent('gatehouse_proxy_duration_ms_bucket')}&start=${now - 600}&end=${now + 600}`,
    d => Array.isArray(d) && d.some((s: any) => s.exemplars?.length > 0), 'exemplars')
  const ids = ex.flatMap((s: any) => s.exemplars.map((e: any) => e.labels.trace_id))
  t.ok(ids.length > 0 && ids.every((id: string) => traces.has(id)), 'exemplars carry trace ids of requests the backend saw')

  // A scraper that does not ask for OpenMetrics gets the plain text format, without exemplars.
  const plain = await fetch(`http://127.0.0.1:${w.s.managementPort}/metrics`, { headers: { connection: 'close' } })
  t.match(plain.headers.get('content-type'), 'text/plain; version=0.0.4')
  t.notMatch(await plain.text(), '# {trace_id=')
})
