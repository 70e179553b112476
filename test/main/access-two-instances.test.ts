/** Gateway access control with two instances sharing one PostgreSQL and one Redis. */
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { eventually } from '../helpers/wait.js'

t.test('api keys, rotation and a shared rate limit across two instances', async t => {
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const secretsKey = Buffer.alloc(32, 7).toString('base64')
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '100', SECRETS_KEY: secretsKey
  }), { logger: silentLogger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const backend = await startBackend(t)
  const token = await a.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${a.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  const coll = (await api('POST', '/collections', { name: 'paid', base_path: '/paid', upstream_url: backend.url })).body
  await api('POST', '/proxies', { collection_id: coll.id, name: 'x', methods: ['GET'], path: '/x', status: 'published' })
  const pol = (await api('POST', '/policies', { name: 'ten', rate_limit: { requests: 10, per_seconds: 300 } })).body
  const cl = (await api('POST', '/clients', { name: 'acme' })).body
  const prof = (await api('POST', `/clients/${cl.id}/profiles`, { name: 'k', auth_type: 'api_key', collection_ids: [coll.id], policy_id: pol.id })).body
  const key1 = prof.credentials.api_key
  const call = async (inst: typeof a, key: string) => {
    const r = await fetch(`http://127.0.0.1:${inst.gatewayPort}/paid/x`, { headers: { authorization: `Bearer ${key}`, 'x-client-id': cl.id, 'x-profile-id': prof.id, connection: 'close' } })
    await r.text()
    return r.status
  }
  const until = async (fn: () => Promise<boolean>) => await eventually(fn, undefined, 50)
  t.ok(await until(async () => (await call(b, key1)) === 200), 'instance B accepts the key created on A')
  t.equal(await call(a, 'gh_wrong'), 401)

  // Rotation on A: the old key stops working on both instances.
  const rotated = (await api('POST', `/clients/${cl.id}/profiles/${prof.id}/rotate`)).body
  const key2 = rotated.credentials.api_key
  t.equal(await call(a, key1), 401, 'old key refused at once on the instance that rotated')
  t.ok(await until(async () => (await call(b, key1)) === 401), 'and on the other instance after its reload')
  t.equal(await call(b, key2), 200)

  // A parallel burst split across both instances: the shared limit admits exactly 10 in the window.
  const fresh = (await api('POST', `/clients/${cl.id}/profiles`, { name: 'burst', auth_type: 'api_key', collection_ids: [coll.id], policy_id: pol.id })).body
  const burstCall = async (inst: typeof a) => {
    const r = await fetch(`http://127.0.0.1:${inst.gatewayPort}/paid/x`, { headers: { authorization: `Bearer ${fresh.credentials.api_key}`, 'x-client-id': cl.id, 'x-profile-id': fresh.id, connection: 'close' } })
    await r.text()
    return r.status
  }
  t.ok(await until(async () => { const s = await burstCall(b); return s === 200 }), 'the new profile is known on B')
  const metricsOf = async (inst: typeof a) => {
    const r = await fetch(`http://127.0.0.1:${inst.managementPort}/api/v1/metrics`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })
    return await r.json() as any
  }
  const before = await Promise.all([metricsOf(a), metricsOf(b)])
  const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => burstCall(i % 2 === 0 ? a : b)))
  t.equal(statuses.filter(s => s === 200).length, 9, 'exactly the remaining 9 of 10 are admitted across both instances')
  t.equal(statuses.filter(s => s === 429).length, 21)

  // Metrics (per instance) add up to the burst; the request log (shared) holds every call of the profile.
  const after = await Promise.all([metricsOf(a), metricsOf(b)])
  const delta = (pick: (m: any) => number) => pick(after[0]) + pick(after[1]) - pick(before[0]) - pick(before[1])
  t.equal(delta(m => m.clients[cl.id]?.requests ?? 0), 30, 'client metrics count the burst on both instances')
  t.equal(delta(m => m.clients[cl.id]?.errors['4xx'] ?? 0), 21, '429s are client errors')
  t.equal(after[0].clients[cl.id].requests - (before[0].clients[cl.id]?.requests ?? 0), 15, 'each instance counts what it served')
  const logged = async (status: number) => {
    const r = await api('GET', `/request-logs?profile_id=${fresh.id}&status=${status}&limit=100`)
    return r.body.items as any[]
  }
  t.ok(await until(async () => (await logged(429)).length === 21 && (await logged(200)).length === 10), 'the request log holds every call of the profile')
  t.ok((await logged(429)).every(x => x.client_id === cl.id && x.path === '/paid/x' && x.method === 'GET'))

  // Disabling the policy lifts the limit at once: on the instance that changed it, and on the other after its reload.
  t.equal(await burstCall(a), 429)
  t.equal((await api('PUT', `/policies/${pol.id}/toggle-status`, { status: 'disabled' })).status, 200)
  t.equal(await burstCall(a), 200, 'lifted on A as soon as the change is answered')
  t.ok(await until(async () => (await burstCall(b)) === 200), 'and on B')
  const lifted = await Promise.all(Array.from({ length: 20 }, (_, i) => burstCall(i % 2 === 0 ? a : b)))
  t.same(lifted.filter(s => s !== 200), [], 'no call is limited any more')
})
