/** Load shedding: past SHED_MAX_IN_FLIGHT, or with a saturated event loop, new requests get a quick 503 with Retry-After, counted in /metrics. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { GATEWAY_SERVER } from '../../helpers/gateway.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'
import { eventually, retryUntil } from '../../helpers/wait.js'

t.test('in-flight limit and event-loop delay', async t => {
  const held: http.ServerResponse[] = []
  const backend = http.createServer((req, res) => { if (req.url === '/hold') held.push(res); else res.end('ok') })
  await new Promise<void>(resolve => backend.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { backend.closeAllConnections(); backend.close() })
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER,
    PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '',
    SHED_MAX_IN_FLIGHT: '2', SHED_EVENT_LOOP_DELAY_MS: '100', REQUEST_LOG_RETENTION_HOURS: '0'
  }), { logger: silentLogger })
  t.teardown(async () => { for (const r of held) r.end(); await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'b', base_path: '/b', upstream_url: `http://127.0.0.1:${(backend.address() as AddressInfo).port}`, auth_required: false })
  await api('POST', '/proxies', { collection_id: c.id, name: 'hold', methods: ['GET'], path: '/hold', status: 'published' })
  await api('POST', '/proxies', { collection_id: c.id, name: 'quick', methods: ['GET'], path: '/quick', status: 'published' })
  const g = `http://127.0.0.1:${s.gatewayPort}/b`

  const slow = [fetch(`${g}/hold`), fetch(`${g}/hold`)]
  t.ok(await eventually(() => held.length === 2), 'two requests in flight')
  const third = await fetch(`${g}/quick`)
  t.equal(third.status, 503, 'a third is shed')
  t.ok(Number(third.headers.get('retry-after')) >= 1)
  t.match(await third.json(), { error: { code: 'service_unavailable', message: /overloaded.*SHED_MAX_IN_FLIGHT=2/ } })
  for (const r of held.splice(0)) r.end('done')
  await Promise.all(slow)
  t.equal((await fetch(`${g}/quick`)).status, 200, 'served again once the load is gone')

  // A saturated loop: late on most of its turns for a while (a busy main thread in 150 ms slices).
  const until = Date.now() + 1500
  await new Promise<void>(resolve => {
    const burn = () => { const end = Date.now() + 150; while (Date.now() < end); if (Date.now() < until) setImmediate(burn); else resolve() }
    burn()
  })
  const delayed = await fetch(`${g}/quick`)
  t.equal(delayed.status, 503, 'shed while the event loop is saturated')
  t.match(await delayed.json(), { error: { message: /event loop is delayed/ } })
  const back = await retryUntil(async () => (await fetch(`${g}/quick`)).status, status => status === 200, undefined, 100)
  t.equal(back, 200, 'served again when the loop recovers')

  const samples = parsePrometheus(await (await fetch(`http://127.0.0.1:${s.managementPort}/metrics`)).text())
  const shed = (signal: string) => samples.find(x => x.name === 'gatehouse_gateway_shed_total' && x.labels.signal === signal)?.value ?? 0
  t.ok(shed('in_flight') >= 1)
  t.ok(shed('event_loop_delay') >= 1)
  t.ok((samples.find(x => x.name === 'gatehouse_gateway_refused_total' && x.labels.reason === '503')?.value ?? 0) >= 2, 'and in the refused count')
})
