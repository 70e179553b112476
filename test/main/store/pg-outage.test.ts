/**
 * PostgreSQL crashes under load: a throwaway cluster is stopped with
 * `pg_ctl -m immediate` and started again ten times while management writes
 * and gateway traffic run. The process lives, the gateway keeps answering,
 * refused writes are 503 with Retry-After, and every acknowledged write is
 * there afterwards.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { startPgCluster } from '../../helpers/pg-cluster.js'
import { retryUntil } from '../../helpers/wait.js'

const sleep = async (ms: number) => await new Promise(resolve => setTimeout(resolve, ms))

t.test('ten immediate PostgreSQL stops under write and gateway load', async t => {
  const cluster = await startPgCluster()
  t.teardown(async () => { await cluster.close() })
  const config = loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: cluster.url, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: await createTempDir(t), DB_QUERY_TIMEOUT_MS: '3000', CONFIG_POLL_INTERVAL_MS: '200', WORKERS: '1'
  })
  const svc = await start(config, { logger: silentLogger })
  t.teardown(async () => { await svc.close() })
  const token = await svc.issueToken!('alice', 'admin')
  const m = `http://127.0.0.1:${svc.managementPort}/api/v1`
  const g = `http://127.0.0.1:${svc.gatewayPort}`
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(m + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000)
    })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }
  }
  const backend = await startBackend(t)
  const c = await api('POST', '/collections', { name: 'demo', base_path: '/demo', upstream_url: backend.url, auth_required: false })
  t.equal(c.status, 201)
  const p = await api('POST', '/proxies', { collection_id: c.body.id, name: 'all', methods: ['GET'], path: '/*', status: 'published' })
  t.equal(p.status, 201)

  let running = true
  const acknowledged: string[] = []
  const refused: Array<{ status: number, retryAfter: string | null, code: string }> = []
  let seq = 0
  const writer = async () => {
    while (running) {
      const r = await api('POST', '/clients', { name: `client-${seq++}` }).catch(() => null)
      if (r === null) continue
      if (r.status === 201) acknowledged.push(r.body.id)
      else refused.push({ status: r.status, retryAfter: r.headers.get('retry-after'), code: r.body?.error?.code })
      await sleep(25)
    }
  }
  const gatewayStatuses = new Map<number, number>()
  let gatewayOk = 0
  const caller = async () => {
    while (running) {
      const res = await fetch(`${g}/demo/ping`, { signal: AbortSignal.timeout(20_000) }).catch(() => null)
      if (res !== null) {
        await res.arrayBuffer()
        gatewayStatuses.set(res.status, (gatewayStatuses.get(res.status) ?? 0) + 1)
        if (res.status === 200) gatewayOk++
      }
      await sleep(10)
    }
  }
  const load = [writer(), writer(), caller(), caller()]

  const down: number[] = []
  for (let i = 0; i < 10; i++) {
    await sleep(300)
    await cluster.crash()
    const before = gatewayOk
    // Generous: the machine may be loaded; one answer per outage is enough to show traffic flows.
    await sleep(1000)
    down.push(gatewayOk - before)
    await cluster.start()
  }
  await sleep(500)
  // Recovery alone: writes succeed again without any help.
  const recovered = await retryUntil(async () => (await api('POST', '/clients', { name: 'after' })).status === 201, ok => ok, undefined, 200)
  running = false
  await Promise.all(load)

  t.ok(recovered, 'writes succeed again after the last restart')
  t.ok(down.every(n => n > 0), `gateway traffic flowed during every outage (200s per outage: ${down.join(', ')})`)
  t.same([...gatewayStatuses.keys()], [200], 'the gateway answered only 200 throughout')
  t.ok(acknowledged.length > 5, `writes were acknowledged (${acknowledged.length})`)
  t.ok(refused.length > 0, 'some writes were refused while the database was down')
  t.same(refused.filter(r => r.status !== 503 || r.retryAfter === null || r.code !== 'service_unavailable'), [],
    'every refused write is a 503 service_unavailable with Retry-After')
  const missing: string[] = []
  for (const id of acknowledged) {
    if ((await api('GET', `/clients/${id}`)).status !== 200) missing.push(id)
  }
  t.same(missing, [], 'no acknowledged write is lost')
  t.equal((await fetch(`http://127.0.0.1:${svc.managementPort}/readyz`)).status, 200, 'ready again')
})
