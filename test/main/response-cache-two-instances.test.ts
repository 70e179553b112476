/** The response cache with CACHE_TYPE=redis: two instances sharing one PostgreSQL and one Redis. */
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { TEST_REDIS_URL } from '../helpers/services.js'

t.test('every instance serves what one fetched; a purge on one empties both', async t => {
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '100', SECRETS_KEY: Buffer.alloc(32, 7).toString('base64')
  }), { logger: silentLogger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  let n = 0
  const backend = await startBackend(t, (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: ++n })) })
  const token = await a.issueToken!('alice', 'admin')
  const api = async (inst: typeof a, method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${inst.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await r.text()
    return { status: r.status, body: text === '' ? undefined : JSON.parse(text), text }
  }
  const coll = (await api(a, 'POST', '/collections', { name: 'cat', base_path: '/cat', upstream_url: backend.url, auth_required: false })).body
  const p = (await api(a, 'POST', '/proxies', { collection_id: coll.id, name: 'list', methods: ['GET'], path: '/list', status: 'published', cache: { ttl_s: 300 } })).body
  t.same(p.cache, { ttl_s: 300, vary: [], shared: false }, 'stored with its defaults')
  const get = async (inst: typeof a) => {
    const r = await fetch(`http://127.0.0.1:${inst.gatewayPort}/cat/list`, { headers: { connection: 'close' } })
    return { status: r.status, n: r.status === 200 ? (await r.json() as { n: number }).n : (await r.text(), -1), cache: r.headers.get('cache-status') }
  }
  const until = async (fn: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) { if (await fn()) return true; await new Promise(resolve => setTimeout(resolve, 50)) }
    return false
  }
  t.ok(await until(async () => (await get(b)).status === 200), 'instance B serves the new proxy')
  await api(a, 'DELETE', `/proxies/${p.id as string}/cache`)
  const miss = await get(a)
  t.equal(miss.cache, 'gatehouse; fwd=uri-miss; stored')
  const seen = backend.seen.length
  const onB = await get(b)
  t.match(onB, { n: miss.n, cache: /^gatehouse; hit/ }, 'B serves what A fetched')
  t.equal(backend.seen.length, seen, 'without a backend call')

  const purge = await api(b, 'DELETE', `/proxies/${p.id as string}/cache`)
  t.equal(purge.status, 204, 'purged on B')
  const afterA = await get(a)
  t.equal(afterA.cache, 'gatehouse; fwd=uri-miss; stored', 'A misses after the purge on B')
  t.not(afterA.n, miss.n)
  t.match(await get(b), { n: afterA.n, cache: /^gatehouse; hit/ }, 'and B serves the new entry')
  t.equal((await api(a, 'DELETE', '/proxies/nope/cache')).status, 404)

  // A configuration change of the proxy drops its entries, on both instances.
  t.equal((await api(a, 'PUT', `/proxies/${p.id as string}`, { description: 'changed' })).status, 200)
  t.ok(await until(async () => (await get(b)).cache === 'gatehouse; fwd=uri-miss; stored'), 'B misses once it has the change')

  // B served the hits.
  const metrics = await (await fetch(`http://127.0.0.1:${b.managementPort}/metrics`, { headers: { connection: 'close' } })).text()
  t.match(metrics, new RegExp(`gatehouse_response_cache_requests_total\\{proxy_id="${p.id as string}",result="hit"\\} [1-9]`), 'hits in /metrics')
  t.match(metrics, /gatehouse_response_cache_hit_ratio 0\.[1-9]\d*/)
  const doc = (await api(a, 'GET', '/openapi.json')).body
  t.equal(doc.paths['/api/v1/proxies/{id}/cache'].delete.operationId, 'purge_proxy_cache', 'the purge is an operation of the API and an MCP tool')
})
