/**
 * A configuration change made on one instance goes live on another through Redis, without
 * waiting for the store poll (set to ten minutes here, so only the broadcast can explain it).
 */
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { TEST_REDIS_URL } from '../helpers/services.js'
import { eventually, uniquePrefix } from './cache/shared.js'

t.test('publishing, unpublishing and deleting on instance A change what instance B serves, through Redis', async t => {
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t)
  const prefix = uniquePrefix('config-propagation')
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '600000', WORKERS: '1'
  }), { logger: silentLogger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const backend = await startBackend(t)
  const token = await a.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${a.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: r.status === 204 ? null : await r.json() as any }
  }
  const statusOn = async (port: number) => {
    const r = await fetch(`http://127.0.0.1:${port}/shop/items`, { headers: { connection: 'close' } })
    await r.text()
    return r.status
  }
  t.equal(await statusOn(b.gatewayPort), 404)
  const coll = (await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })).body
  const p = (await api('POST', '/proxies', { collection_id: coll.id, name: 'items', methods: ['GET'], path: '/items', status: 'published' })).body
  t.equal(await statusOn(a.gatewayPort), 200, 'live at once on the instance that made the change')
  t.ok(await eventually(async () => await statusOn(b.gatewayPort) === 200), 'live on the other instance')
  t.equal((await api('PUT', `/proxies/${p.id}`, { status: 'draft' })).status, 200)
  t.ok(await eventually(async () => await statusOn(b.gatewayPort) === 404), 'unpublished on the other instance')
  t.equal((await api('PUT', `/proxies/${p.id}`, { status: 'published' })).status, 200)
  t.ok(await eventually(async () => await statusOn(b.gatewayPort) === 200))
  t.equal((await api('DELETE', `/collections/${coll.id}`)).status, 204)
  t.ok(await eventually(async () => await statusOn(b.gatewayPort) === 404), 'a deleted collection is gone on the other instance')
})
