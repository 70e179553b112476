/**
 * The event stream across two full service instances (src/main/server.ts start())
 * sharing one PostgreSQL database: through Redis every change made over REST on A
 * reaches subscribers on A and B once, with the same SSE ids, and a client can
 * resume on the other instance; a Redis outage keeps local delivery and the API
 * working, and delivery across instances resumes once Redis is back; without
 * Redis, delivery stays on the instance that made the change.
 */
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../../helpers/db.js'
import { openStream, type SseReader } from '../../helpers/sse.js'
import { PATIENCE_MS } from '../../helpers/wait.js'
import { startRedisServer } from '../cache/redis-server.js'
import { REDIS_URL, uniquePrefix } from '../cache/shared.js'

async function twoServices (t: Test, env: Record<string, string>): Promise<[Service, Service]> {
  const url = await createTestDatabase(t)
  const prefix = uniquePrefix('two-instances')
  const dataDir = await createTempDir(t) // one DATA_DIR: the same local issuer key signs tokens both accept
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: url, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '200', ...env
  }), { logger: silentLogger, keyPrefix: prefix })
  const a = await mk()
  const b = await mk()
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  return [a, b]
}

const base = (s: Service) => `http://127.0.0.1:${s.managementPort}`

function client (s: Service, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base(s) + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
  }
}

async function subscribe (t: Test, s: Service, token: string, lastEventId?: string): Promise<SseReader> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
  const { res, r } = await openStream(t, `${base(s)}/api/v1/events/stream`, headers)
  if (res.status !== 200) throw new Error(`stream answered ${res.status}`)
  if (lastEventId === undefined) await r.next() // the starting position
  return r
}

/** The next `n` data frames as {id, event}. */
async function frames (r: SseReader, n: number, timeoutMs = PATIENCE_MS) {
  const out: Array<{ id: string | undefined, type: string | undefined, event: any }> = []
  for (let i = 0; i < n; i++) {
    const f = await r.nextData(timeoutMs)
    if (f === undefined) break
    out.push({ id: f.id, type: f.event, event: JSON.parse(f.data[0]!) })
  }
  return out
}

const what = (e: any) => `${String(e.resource_kind)}/${String(e.operation ?? (e.workflow_enabled === true ? 'enabled' : 'saved'))}`

t.test('through Redis: every change made on A reaches B once, with the same ids; a client resumes on the other instance', async t => {
  const [a, b] = await twoServices(t, { CACHE_TYPE: 'redis', REDIS_URL })
  const admin = await a.issueToken!('alice', 'admin')
  const viewer = await b.issueToken!('bob', 'viewer')
  const onA = await subscribe(t, a, viewer)
  const onB = await subscribe(t, b, viewer)
  const api = client(a, admin)

  const coll = (await api('POST', '/api/v1/collections', { name: 'shared', base_path: '/shared', upstream_url: 'http://127.0.0.1:9' })).body
  const proxy = (await api('POST', '/api/v1/proxies', { collection_id: coll.id, name: 'x', methods: ['GET'], path: '/x' })).body
  t.equal((await api('PUT', `/api/v1/proxies/${proxy.id}/workflow`, { enabled: true })).status, 200)
  const cred = (await api('POST', '/api/v1/credentials', { name: 'b', type: 'http_bearer', config: { token: 'secret-token-1' } })).body
  const pol = (await api('POST', '/api/v1/policies', { name: 'gold' })).body
  const cl = (await api('POST', '/api/v1/clients', { name: 'acme' })).body
  const prof = (await api('POST', `/api/v1/clients/${cl.id}/profiles`, { name: 'k' })).body
  const expected = [
    { resource_kind: 'collection', collection_id: coll.id, operation: 'created' },
    { resource_kind: 'proxy', proxy_id: proxy.id, collection_id: coll.id, operation: 'created' },
    { resource_kind: 'proxy_workflow', proxy_id: proxy.id, definition_changed: true, enabled_changed: true, workflow_enabled: true },
    { resource_kind: 'credential', credential_id: cred.id, operation: 'created' },
    { resource_kind: 'policy', policy_id: pol.id, operation: 'created' },
    { resource_kind: 'client', client_id: cl.id, operation: 'created' },
    { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'created' }
  ]
  const gotB = await frames(onB, expected.length)
  const gotA = await frames(onA, expected.length)
  t.match(gotB.map(f => f.event), expected.map(e => ({ schema_version: 1, actor_sub: 'alice', ...e })), 'B received every change made on A, in order')
  t.same(gotA.map(f => f.id), gotB.map(f => f.id), 'with the same SSE ids on both instances')
  t.equal(new Set(gotB.map(f => f.id)).size, expected.length, 'one id per event')

  // B's client goes away after the first event; two more changes are made on A; it resumes on A.
  const resumeFrom = gotB[0]!.id!
  const onAResumed = await subscribe(t, a, viewer, resumeFrom)
  const replayed = await frames(onAResumed, expected.length - 1)
  t.same(replayed.map(f => f.id), gotB.slice(1).map(f => f.id), 'the instance it resumes on replays what came after its last id')
  await api('PUT', `/api/v1/policies/${pol.id}/toggle-status`)
  t.match((await frames(onAResumed, 1))[0]?.event, { resource_kind: 'policy', operation: 'status_changed' }, 'then goes on live')
  t.match((await frames(onB, 1))[0]?.event, { resource_kind: 'policy', operation: 'status_changed' })
  t.same((await frames(onB, 1, 500)), [], 'nothing is delivered twice')

  const lost = await subscribe(t, b, viewer, '1-0')
  const [resync] = await frames(lost, 1)
  t.equal(resync?.type, 'resync', 'an id older than the window gets a resync')
})

t.test('a Redis outage: the API and local delivery go on; across instances again once Redis is back', async t => {
  const redis = await startRedisServer()
  t.teardown(() => redis.close())
  const [a, b] = await twoServices(t, { CACHE_TYPE: 'redis', REDIS_URL: redis.url })
  const admin = await a.issueToken!('alice', 'admin')
  const onA = await subscribe(t, a, admin)
  const onB = await subscribe(t, b, admin)
  const api = client(a, admin)
  const pol = (await api('POST', '/api/v1/policies', { name: 'p' })).body
  t.equal((await frames(onB, 1))[0]?.event.policy_id, pol.id, 'delivered across instances')
  await frames(onA, 1)

  await redis.stop()
  const r = await api('PUT', `/api/v1/policies/${pol.id}/toggle-status`)
  t.equal(r.status, 200, 'a change is accepted while Redis is down')
  t.match((await frames(onA, 1))[0]?.event, { policy_id: pol.id, operation: 'status_changed' }, 'and reaches the subscribers of its instance')
  const ready = await fetch(`${base(a)}/readyz`, { headers: { connection: 'close' } })
  t.equal(ready.status, 503, '/readyz tells Redis is missing')
  t.match((await ready.json() as any).checks.redis, /unreachable/)

  await redis.start()
  // Both instances reconnect on their own; keep making changes until one crosses over (bounded generously).
  let crossed: any
  for (let i = 0, until = Date.now() + PATIENCE_MS; Date.now() < until && crossed === undefined; i++) {
    await api('PUT', `/api/v1/policies/${pol.id}`, { description: `after ${i}` })
    for (const f of await frames(onB, 5, 500)) if (f.event.operation === 'updated') crossed = f.event
  }
  t.match(crossed, { resource_kind: 'policy', policy_id: pol.id, operation: 'updated' }, 'B receives changes made on A again')
  t.equal((await fetch(`${base(b)}/livez`, { headers: { connection: 'close' } })).status, 200, 'nothing crashed')
})

t.test('without Redis, delivery stays on the instance that made the change', async t => {
  const [a, b] = await twoServices(t, { CACHE_TYPE: 'memory', SSE_PING_INTERVAL_MS: '100' })
  const admin = await a.issueToken!('alice', 'admin')
  const onA = await subscribe(t, a, admin)
  const onB = await subscribe(t, b, admin)
  const onA2 = await subscribe(t, a, admin)
  const made = (await client(a, admin)('POST', '/api/v1/clients', { name: 'made-on-a' })).body
  t.equal((await frames(onA, 1))[0]?.event.client_id, made.id, 'A fans out to its subscribers')
  t.equal((await frames(onA2, 1))[0]?.event.client_id, made.id, 'to every one of them')
  const sentinel = (await client(b, admin)('POST', '/api/v1/clients', { name: 'made-on-b' })).body
  const [first] = await frames(onB, 1)
  t.equal(first?.event.client_id, sentinel.id, "B's subscriber sees only B's change")
  let ping
  for (let i = 0; i < 20 && ping === undefined; i++) {
    const f = await onB.next(2000)
    if (f?.comment.includes('ping') === true) ping = f
  }
  t.ok(ping, 'keep-alive comments come every SSE_PING_INTERVAL_MS')
})
