/**
 * Upstreams with two instances sharing one PostgreSQL and one Redis: both serve the same targets
 * and see every change; health is each instance's own (REST, /metrics, the management MCP), and a
 * change of state is logged once.
 */
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { countBy, load, startBackend } from '../helpers/backends.js'
import { parsePrometheus } from '../helpers/prometheus-text.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { eventually, recordingLogger } from './cache/shared.js'

t.test('two instances: same configuration, health per instance', async t => {
  const dbUrl = await createTestDatabase(t)
  const prefix = `gh-test-up-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const rec = recordingLogger()
  // One DATA_DIR: both instances sign and verify management tokens with the same local key.
  const dataDir = await createTempDir(t)
  const mk = async (logger: typeof silentLogger) => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: dbUrl, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'info',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '200', SECRETS_KEY: Buffer.alloc(32, 7).toString('base64')
  }), { logger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(rec.logger), mk(silentLogger)])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const one = await startBackend(t, '127.0.0.2', 'one')
  const two = await startBackend(t, '127.0.0.3', 'two')
  const token = await a.issueToken!('alice', 'admin')
  const api = async (inst: typeof a, method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${inst.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await r.text()
    return { status: r.status, body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text }
  }
  const created = await api(a, 'POST', '/collections', {
    name: 'orders', base_path: '/orders', auth_required: false,
    upstream: { targets: [{ url: one.url }, { url: two.url }], health_checks: { passive: { consecutive_failures: 2, ejection_ms: 60_000, max_ejection_percent: 50 } } }
  })
  t.equal(created.status, 201)
  const col = created.body
  await api(a, 'POST', '/proxies', { collection_id: col.id, name: 'all', methods: ['GET'], path: '/*', status: 'published' })
  const gw = (inst: typeof a) => `http://127.0.0.1:${inst.gatewayPort}/orders/list`

  t.ok(await eventually(async () => (await fetch(gw(b))).status === 200, 400), 'B serves the collection made on A')
  t.same(countBy(await load(gw(b), 40, 4)), { one: 20, two: 20 }, 'B balances over both targets')
  t.same(countBy(await load(gw(a), 40, 4)), { one: 20, two: 20 }, 'so does A')

  // Target two dies; only A carries traffic, so only A ejects it.
  await two.stop()
  const during = await load(gw(a), 30, 3)
  t.ok(during.every(r => r.status === 200 && r.backend === 'one'), 'A answers every GET from the live target')
  const healthA = await api(a, 'GET', `/collections/${col.id}/upstream/health`)
  const healthB = await api(b, 'GET', `/collections/${col.id}/upstream/health`)
  t.equal(healthA.status, 200)
  t.match(healthA.body.targets, [{ url: one.url, state: 'healthy' }, { url: two.url, state: 'ejected', last_error: /ECONNREFUSED|connection/ }], 'A: two is ejected')
  t.match(healthB.body.targets, [{ url: one.url, state: 'healthy' }, { url: two.url, state: 'healthy' }], 'B has seen no failure: its own view')
  t.type(healthA.body.targets[1].since, 'string')

  const scraped = await fetch(`http://127.0.0.1:${a.managementPort}/metrics`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })
  const metrics = parsePrometheus(await scraped.text())
  const gauge = metrics.filter(s => s.name === 'gatehouse_upstream_target_healthy')
  t.same(gauge.map(s => [s.labels.collection, s.labels.target, s.value]), [['orders', one.url, 1], ['orders', two.url, 0]])

  const ejections = rec.lines.filter(l => l.msg === 'upstream target address is ejected')
  t.equal(ejections.length, 1, 'the ejection is logged once, not per request')
  t.match(ejections[0], { collection_id: col.id, target: two.url, to: 'ejected' })

  // The management MCP's tool answers the same view.
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${a.managementPort}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'up-test', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(async () => { await client.close().catch(() => {}) })
  const tool = await client.callTool({ name: 'get_upstream_health', arguments: { id: col.id } })
  t.match(JSON.parse((tool.content as Array<{ text: string }>)[0]?.text ?? 'null'), { targets: [{ state: 'healthy' }, { state: 'ejected' }] })

  // A change made on B reaches A: two leaves the targets.
  const changed = await api(b, 'PUT', `/collections/${col.id}`, { upstream: { targets: [{ url: one.url, weight: 100 }] } })
  t.equal(changed.body.upstream_url, one.url)
  t.ok(await eventually(async () => (await api(a, 'GET', `/collections/${col.id}/upstream/health`)).body.targets.length === 1, 400), "A's view follows")
})
