/** Gateway access control with two instances sharing one PostgreSQL and one Redis. */
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'

t.test('api keys, rotation and a shared rate limit across two instances', async t => {
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const secretsKey = Buffer.alloc(32, 7).toString('base64')
  const mk = async () => await start(loadConfig({
    DATABASE_URL: url, CACHE_TYPE: 'redis', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
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
  const until = async (fn: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) { if (await fn()) return true; await new Promise(resolve => setTimeout(resolve, 50)) }
    return false
  }
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
  const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => burstCall(i % 2 === 0 ? a : b)))
  t.equal(statuses.filter(s => s === 200).length, 9, 'exactly the remaining 9 of 10 are admitted across both instances')
  t.equal(statuses.filter(s => s === 429).length, 21)
})
