/**
 * /metrics from a real run as an operator scrapes it: proxy series labelled with the proxy and
 * collection names (one per configured proxy, gone when the proxy goes), and the traffic the
 * gateway refused by itself counted by status.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'

t.test('named proxy series and refused traffic by reason', async t => {
  const backend = await startBackend(t)
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '', UPSTREAM_CONNECT_TIMEOUT_MS: '2000' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const shop = await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  const items = await api('POST', '/proxies', { collection_id: shop.id, name: 'list items', methods: ['GET'], path: '/items', status: 'published' })
  const down = await api('POST', '/collections', { name: 'legacy', base_path: '/legacy', upstream_url: 'http://127.0.0.1:9', auth_required: false })
  const old = await api('POST', '/proxies', { collection_id: down.id, name: 'old', methods: ['GET'], path: '/old', status: 'published' })
  const locked = await api('POST', '/collections', { name: 'locked', base_path: '/locked', upstream_url: backend.url, auth_required: true })
  await api('POST', '/proxies', { collection_id: locked.id, name: 'secret', methods: ['GET'], path: '/s', status: 'published' })

  const g = `http://127.0.0.1:${s.gatewayPort}`
  const statuses = []
  for (const [path, method] of [['/shop/items', 'GET'], ['/shop/items', 'GET'], ['/shop/items', 'POST'], ['/nowhere', 'GET'], ['/locked/s', 'GET'], ['/legacy/old', 'GET']]) {
    const r = await fetch(g + path, { method })
    await r.text()
    statuses.push(r.status)
  }
  t.same(statuses, [200, 200, 405, 404, 401, 502])
  const scrape = async () => parsePrometheus(await (await fetch(`http://127.0.0.1:${s.managementPort}/metrics`)).text())
  let samples = await scrape()
  const one = (name: string, labels: Record<string, string>) => samples.filter(x => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
  t.match(one('gatehouse_proxy_requests_total', { proxy_id: items.id }), [{ labels: { proxy: 'list items', collection: 'shop', collection_id: shop.id }, value: 2 }], 'the two GETs (the 405 matched no method of it)')
  t.match(one('gatehouse_proxy_requests_total', { proxy_id: old.id }), [{ labels: { proxy: 'old', collection: 'legacy' }, value: 1 }])
  const refused = (reason: string) => one('gatehouse_gateway_refused_total', { reason })[0]?.value
  t.equal(refused('405'), 1)
  t.equal(refused('404'), 1)
  t.equal(refused('401'), 1)
  t.equal(refused('502'), 1)
  t.equal(refused('429'), 0, 'every reason has a series from the start')
  t.equal(samples.filter(x => x.name === 'gatehouse_gateway_refused_total').reduce((a, x) => a + x.value, 0), 4, 'the backend\'s own answers are not refusals')

  // The proxy goes, its series with it.
  const del = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/proxies/${old.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
  t.equal(del.status, 204)
  samples = await scrape()
  t.same(one('gatehouse_proxy_requests_total', { proxy_id: old.id }), [], 'deleted proxy: no series left')
  t.equal(one('gatehouse_proxy_requests_total', { proxy_id: items.id }).length, 1)
})
