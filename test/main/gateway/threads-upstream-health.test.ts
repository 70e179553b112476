/**
 * GATEWAY_THREADS=2: one upstream health view for the process. Passive failures seen by either
 * thread count toward one ejection, which the management API shows and every thread (a restarted
 * one too) applies; active probes go out once per interval, not once per thread, and a target
 * they bring back is used by every thread again. Requests go on fresh connections, which the
 * kernel spreads over the threads.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend, type Handler } from '../../helpers/backends.js'
import { threadedClient } from '../../helpers/threads.js'
import { eventually } from '../../helpers/wait.js'

t.setTimeout(600_000)

const service = async (t: Parameters<typeof createTempDir>[0]) => {
  const s = await start(loadConfig({
    GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '2', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
    DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', SHED_EVENT_LOOP_DELAY_MS: '0'
  }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  return { s, c: await threadedClient(s) }
}
const backendOf = (body: string): string | null => body.startsWith('{') ? JSON.parse(body).backend ?? null : null

t.test('passive failures on both threads eject a target once, for every thread', async t => {
  const N = 4
  const live = await startBackend(t, '127.0.0.2', 'live')
  const sick = await startBackend(t, '127.0.0.3', 'sick')
  const { s, c } = await service(t)
  const col = await c.api('POST', '/collections', {
    name: 'orders', base_path: '/orders', auth_required: false,
    upstream: { targets: [{ url: live.url }, { url: sick.url }], health_checks: { passive: { consecutive_failures: N, ejection_ms: 600_000, max_ejection_percent: 50 } } }
  })
  await c.api('POST', '/proxies', { collection_id: col.id, name: 'all', methods: ['GET'], path: '/*', status: 'published' })
  const health = async () => (await c.api('GET', `/collections/${col.id}/upstream/health`)).targets as Array<{ url: string, state: string, last_error: string | null }>

  // The target dies mid-request from now on: each request sent to it is cut (a 502, not retried).
  sick.handler = (req) => { req.socket.destroy() }
  const before = c.perThread(await c.metrics())
  let failures = 0
  for (let i = 0; i < 400 && failures < N; i++) if ((await c.call('/orders/x')).status === 502) failures++
  t.equal(failures, N, `${N} failed requests`)
  t.ok(await eventually(async () => (await health())[1]!.state === 'ejected'), `the target is ejected after ${N} failures counted across the threads`)
  const after = c.perThread(await c.metrics())
  t.comment(`requests per thread until then: ${after.map((n, i) => n - before[i]!).join(' + ')}`)
  t.match(await health(), [{ url: live.url, state: 'healthy' }, { url: sick.url, state: 'ejected', last_error: new RegExp(`${N} failures in a row`) }], 'the management API shows it ejected')
  t.equal(c.sample(await c.metrics(), `gatehouse_upstream_target_healthy{collection="orders",collection_id="${col.id}",target="${sick.url}"}`), 0, 'so does /metrics')

  // No thread sends to it any more (it would answer now).
  sick.handler = null
  const sent = sick.hits
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await c.call('/orders/x')))
  t.same(answers.map(a => [a.status, backendOf(a.body)]), new Array(20).fill([200, 'live']), 'every thread sends to the live target only')
  t.equal(sick.hits, sent, 'the ejected target receives nothing')

  // A thread started again after a crash takes the current state.
  const served = c.perThread(await c.metrics())
  const restarted = s.gatewayThreads!.restarted(1)
  s.gatewayThreads!.crash(1)
  await restarted
  t.ok(await eventually(async () => {
    const r = await c.call('/orders/x').catch(() => null)
    if (r !== null && r.status === 200) t.equal(backendOf(r.body), 'live')
    return c.perThread(await c.metrics())[1]! > served[1]!
  }), 'the restarted thread serves')
  const later = await Promise.all(Array.from({ length: 20 }, async () => await c.call('/orders/x')))
  t.same(later.map(a => [a.status, backendOf(a.body)]), new Array(20).fill([200, 'live']), 'the restarted thread holds the target out too')
  t.equal(sick.hits, sent, 'the ejected target still receives nothing')
})

t.test('active probes go out once per interval; a target back in service is used by every thread', async t => {
  const INTERVAL = 200
  const live = await startBackend(t, '127.0.0.2', 'live')
  let ok = true
  const probes: number[] = []
  const flakyHandler: Handler = (req, res, _body, b) => {
    if (req.url === '/healthz') { probes.push(Date.now()); res.writeHead(ok ? 200 : 503).end(); return }
    res.writeHead(200, { 'content-type': 'application/json', 'x-backend': b.name }).end(JSON.stringify({ backend: b.name }))
  }
  const flaky = await startBackend(t, '127.0.0.3', 'flaky', 0, flakyHandler)
  const { c } = await service(t)
  const col = await c.api('POST', '/collections', {
    name: 'orders', base_path: '/orders', auth_required: false,
    upstream: { targets: [{ url: live.url }, { url: flaky.url }], health_checks: { active: { path: '/healthz', interval_ms: INTERVAL, healthy_threshold: 2, unhealthy_threshold: 2 } } }
  })
  await c.api('POST', '/proxies', { collection_id: col.id, name: 'all', methods: ['GET'], path: '/*', status: 'published' })
  const state = async () => ((await c.api('GET', `/collections/${col.id}/upstream/health`)).targets as Array<{ state: string }>)[1]!.state

  // One prober waits a full interval after each probe ends: 8 probes span at least 7 intervals
  // (a prober per thread would fit them in about half that). A loaded host only stretches it.
  t.ok(await eventually(() => probes.length >= 8), 'the target is probed')
  t.ok(probes[7]! - probes[0]! >= 7 * INTERVAL, `8 probes took ${probes[7]! - probes[0]!} ms: one prober (interval ${INTERVAL} ms)`)

  ok = false
  t.ok(await eventually(async () => await state() === 'unhealthy'), 'failed probes show the target unhealthy in the API')
  const sent = flaky.hits - probes.length
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await c.call('/orders/x')))
  t.same(answers.map(a => [a.status, backendOf(a.body)]), new Array(20).fill([200, 'live']), 'every thread holds the unhealthy target out')
  t.equal(flaky.hits - probes.length, sent, 'it receives only probes')

  ok = true
  t.ok(await eventually(async () => await state() === 'healthy'), 'recovery shows in the API')
  // Which thread served each request (its counter moves); round robin in each thread alternates targets.
  const byThread: Array<Array<string | null>> = [[], []]
  for (let i = 0; i < 24; i++) {
    const was = c.perThread(await c.metrics())
    const r = await c.call('/orders/x')
    t.equal(r.status, 200)
    let now = was
    await eventually(async () => { now = c.perThread(await c.metrics()); return now[0]! + now[1]! > was[0]! + was[1]! })
    byThread[now[0]! > was[0]! ? 0 : 1]!.push(backendOf(r.body))
  }
  t.comment(`thread 0: ${byThread[0]!.join(' ')}; thread 1: ${byThread[1]!.join(' ')}`)
  for (const i of [0, 1]) {
    t.ok(byThread[i]!.length >= 2, `thread ${i} served requests`)
    t.ok(byThread[i]!.includes('flaky'), `thread ${i} sends to the recovered target again`)
  }
})
