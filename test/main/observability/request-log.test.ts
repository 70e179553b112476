import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger, STORE_KINDS } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'

for (const kind of STORE_KINDS) {
  t.test(`request logs and metrics match the traffic (${kind})`, async t => {
    const config = loadConfig({
      DATABASE_URL: kind === 'postgres' ? await createTestDatabase(t) : '', DATA_DIR: await createTempDir(t),
      PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent'
    })
    const s = await start(config, { logger: silentLogger })
    t.teardown(() => s.close())
    const backend = await startBackend(t, (req, res) => { res.statusCode = req.url === '/fail' ? 500 : 200; res.end('x'.repeat(10)) })
    const token = await s.issueToken!('alice', 'admin')
    const m = `http://127.0.0.1:${s.managementPort}`
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(m + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await r.text()
      return { status: r.status, body: text.startsWith('{') ? JSON.parse(text) : text }
    }
    const c = (await api('POST', '/api/v1/collections', { name: 'o', base_path: '/o', upstream_url: backend.url, auth_required: false })).body
    const ok = (await api('POST', '/api/v1/proxies', { collection_id: c.id, name: 'ok', methods: ['GET', 'POST'], path: '/ok', status: 'published' })).body
    const bad = (await api('POST', '/api/v1/proxies', { collection_id: c.id, name: 'fail', methods: ['GET'], path: '/fail', status: 'published' })).body
    const g = `http://127.0.0.1:${s.gatewayPort}`
    for (let i = 0; i < 5; i++) await (await fetch(`${g}/o/ok?i=${i}`, { headers: { connection: 'close' } })).text()
    await (await fetch(`${g}/o/ok`, { method: 'POST', body: 'hello', headers: { connection: 'close' } })).text()
    for (let i = 0; i < 2; i++) await (await fetch(`${g}/o/fail`, { headers: { connection: 'close' } })).text()

    let logs: any
    for (let i = 0; i < 50; i++) {
      logs = (await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}`)).body
      if (logs.items.length === 6) break
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    t.equal(logs.items.length, 6, 'every request to the proxy is logged')
    t.match(logs.items[0], { collection_id: c.id, proxy_id: ok.id, method: 'GET', path: '/o/ok', status: 200, bytes_out: 10, client_id: null })
    t.type(logs.items[0].request_id, 'string')
    t.type(logs.items[0].duration_ms, 'number')
    t.equal(logs.items[5].bytes_in, 5)
    const fails = (await api('GET', '/api/v1/request-logs?status=500')).body
    t.equal(fails.items.length, 2)
    t.ok(fails.items.every((x: any) => x.proxy_id === bad.id))
    t.equal((await api('GET', '/api/v1/request-logs?status=abc')).status, 400)

    const metrics = (await api('GET', '/api/v1/metrics')).body
    t.equal(metrics.proxies[ok.id].requests, 6)
    t.same(metrics.proxies[bad.id].errors, { '4xx': 0, '5xx': 2 })
    t.equal(metrics.proxies[ok.id].latency_ms.last_1m.requests, 6)
    const prom = await fetch(`${m}/metrics`, { headers: { connection: 'close' } })
    t.match(prom.headers.get('content-type'), /^text\/plain/)
    t.match(await prom.text(), `gatehouse_proxy_requests_total{proxy_id="${ok.id}"} 6`)
  })
}
