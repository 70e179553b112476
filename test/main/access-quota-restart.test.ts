/**
 * Quotas with the default memory cache across a restart, on both stores: a 5/day quota spent in
 * part before a stop admits only the rest after the start (a stop writes the last counts); and
 * counts are written behind while running (QUOTA_FLUSH_MS), without a stop.
 */
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start, type Service } from '../../src/main/server.js'
import { silentLogger, storeConfig, type StoreKind } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'

for (const kind of ['embedded', 'postgres'] as StoreKind[]) {
  t.test(`a 5/day quota admits at most 5 across a restart (${kind})`, async t => {
    const backend = await startBackend(t)
    const store = await storeConfig(t, kind)
    const boot = async (): Promise<Service> => {
      const s = await start(loadConfig({
        GATEWAY_THREADS: '1',
        ...store, DB_QUERY_TIMEOUT_MS: '10000', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', CACHE_TYPE: 'memory', QUOTA_FLUSH_MS: '100'
      }), { logger: silentLogger })
      t.teardown(async () => { await s.close() })
      return s
    }
    let s = await boot()
    const admin = await s.issueToken!('root', 'admin')
    const api = async (method: string, path: string, body?: unknown) =>
      await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
    const c = await api('POST', '/collections', { name: 'metered', base_path: '/metered', upstream_url: backend.url, auth_required: true })
    await api('POST', '/proxies', { collection_id: c.id, name: 'x', methods: ['GET'], path: '/x', status: 'published' })
    const policy = await api('POST', '/policies', { name: 'five a day', quota: { requests: 5, period: 'day' } })
    const client = await api('POST', '/clients', { name: 'acme' })
    const profile = await api('POST', `/clients/${client.id}/profiles`, { name: 'p', auth_type: 'api_key', policy_id: policy.id, collection_ids: [c.id] })
    const call = async () => {
      const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/metered/x`, { headers: { authorization: `Bearer ${profile.credentials.api_key}`, 'x-client-id': client.id, 'x-profile-id': profile.id, connection: 'close' } })
      await r.arrayBuffer()
      return r.status
    }
    // The route table and access snapshot follow the writes: wait for the first admitted call.
    let first = await call()
    for (let i = 0; i < 100 && first !== 200; i++) { await new Promise(resolve => setTimeout(resolve, 100)); first = await call() }
    t.equal(first, 200)
    t.same([await call(), await call()], [200, 200], 'three of five spent')

    // A stop writes the last counts; the next start reads them.
    await s.close()
    s = await boot()
    t.same([await call(), await call(), await call(), await call()], [200, 200, 429, 429], 'after a restart only the two left are admitted')

    // Written behind while running (no stop): the store holds the period's 5 within QUOTA_FLUSH_MS.
    const read = async () => (await s.store.query('SELECT key, count FROM quota_counters')).rows as Array<{ key: string, count: number }>
    let stored = await read()
    for (let i = 0; i < 100 && Number(stored[0]?.count) !== 5; i++) { await new Promise(resolve => setTimeout(resolve, 100)); stored = await read() }
    t.match(stored.map(r => [r.key, Number(r.count)]), [[`q:${policy.id as string}:${profile.id as string}`, 5]], 'the store holds the period\'s count')
  })
}
