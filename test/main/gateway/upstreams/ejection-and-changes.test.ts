/**
 * Ejection over time (growing, capped by max_ejection_percent, a fully-ejected upstream still
 * tried), and a target change while a request is in flight to a target that leaves.
 */
import t from 'tap'
import { balancedCollection, proxy, startGateway } from '../../../helpers/gateway.js'
import { countBy, load, startBackend, type Handler } from '../../../helpers/backends.js'

const NO_SHED = { SHED_EVENT_LOOP_DELAY_MS: '0' }
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
async function until (what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!ok()) { if (Date.now() > end) throw new Error(`timed out waiting for ${what}`); await sleep(25) }
}

t.test('ejection grows with each ejection, never past max_ejection_percent, and a fully-ejected upstream is still tried', async t => {
  const live = await startBackend(t, '127.0.0.2', 'live')
  const deadA = await startBackend(t, '127.0.0.3', 'a')
  const deadB = await startBackend(t, '127.0.0.4', 'b')
  await deadA.stop(); await deadB.stop()
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: live.url }, { url: deadA.url }, { url: deadB.url }], {
    health_checks: { passive: { consecutive_failures: 1, ejection_ms: 400, max_ejection_percent: 34 } }
  })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const states = () => gateway.upstreamHealth(col.id)!.map(h => h.state)
  // Every request that meets a dead target is retried on another before anything was sent.
  t.same(countBy(await load(`${url}${col.base_path}/x`, 30, 1)), { live: 30 })
  t.equal(states().filter(s => s === 'ejected').length, 1, 'one of three ejected: 34 % allows one')

  // One dead target of two: ejected for ejection_ms, back, and out twice as long the next time.
  const two = balancedCollection([{ url: live.url }, { url: deadA.url }], {
    health_checks: { passive: { consecutive_failures: 1, ejection_ms: 2000, max_ejection_percent: 50 } }
  }, { id: 'two', base_path: '/two' })
  gateway.setRoutes([col, two], [proxy(two, { path: '/*', target_path: '/*' })])
  const deadState = () => { const s = gateway.upstreamHealth('two')?.[1]; if (s === undefined) throw new Error('collection two has no second target'); return s }
  t.same(countBy(await load(`${url}/two/x`, 6, 1)), { live: 6 })
  // The reason stays readable after the target is back (a loaded host may take that long to look).
  t.match(deadState().last_error, /out for 2000 ms/)
  await until('back after its ejection', () => deadState().state === 'healthy')
  await until('ejected again', () => { void load(`${url}/two/x`, 2, 1); return deadState().state === 'ejected' })
  t.match(deadState().last_error, /out for 4000 ms/, 'the second ejection lasts twice as long')

  // All targets dead and ejectable: requests still go out (no fail-closed 503), and a target that
  // comes back serves at once, before any ejection ends.
  const all = balancedCollection([{ url: deadA.url }, { url: deadB.url }], {
    health_checks: { passive: { consecutive_failures: 1, ejection_ms: 600_000, max_ejection_percent: 100 } }
  }, { id: 'all', base_path: '/all' })
  gateway.setRoutes([col, two, all], [proxy(all, { path: '/*', target_path: '/*' })])
  const failed = await load(`${url}/all/x`, 4, 1)
  t.same(failed.map(f => f.status), [502, 502, 502, 502], 'nothing reachable: 502')
  t.same(gateway.upstreamHealth('all')!.map(h => h.state), ['ejected', 'ejected'])
  await deadA.start()
  const back = await load(`${url}/all/x`, 4, 1)
  t.same(back.map(b => b.status), [200, 200, 200, 200], 'the fully-ejected upstream is still tried, and answers')
})

t.test('changing targets never drops a request in flight; new requests follow the new targets', async t => {
  const slow: Handler = (req, res, body, b) => { setTimeout(() => { res.writeHead(200, { 'x-backend': b.name }); res.end('{}') }, 1500) }
  const old = await startBackend(t, '127.0.0.2', 'old', 0, slow)
  const next = await startBackend(t, '127.0.0.3', 'next')
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: old.url }, { url: next.url, weight: 1 }], { balancing: 'least_connections' })
  const p = proxy(col, { path: '/*', target_path: '/*' })
  gateway.setRoutes([col], [p])
  const inFlight = fetch(`${url}${col.base_path}/slow`).then(async r => ({ status: r.status, backend: r.headers.get('x-backend'), body: await r.text() }))
  await until('the slow request reached the old target', () => old.hits === 1)
  gateway.setRoutes([{ ...balancedCollection([{ url: next.url }], { retries: { attempts: 1 } }), id: col.id, base_path: col.base_path, version: 2 }], [p])
  t.same(countBy(await load(`${url}${col.base_path}/fast`, 10, 2)), { next: 10 }, 'new requests go to the new target')
  t.same(await inFlight, { status: 200, backend: 'old', body: '{}' }, 'the request in flight to the removed target completed')
})

t.test('consistent hashing on the path and on the client address', async t => {
  // A tuple, one backend per name: bs[0]..bs[2] are typed as present.
  const bs = await Promise.all([startBackend(t, '127.0.0.2', 'a'), startBackend(t, '127.0.0.3', 'b'), startBackend(t, '127.0.0.4', 'c')])
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const byPath = balancedCollection(bs.map(b => ({ url: b.url })), { balancing: 'consistent_hash', hash_on: 'path' })
  const byIp = balancedCollection(bs.map(b => ({ url: b.url })), { balancing: 'consistent_hash', hash_on: 'ip' })
  gateway.setRoutes([byPath, byIp], [proxy(byPath, { path: '/*', target_path: '/*' }), proxy(byIp, { path: '/*', target_path: '/*' })])
  const paths = Array.from({ length: 90 }, (_, i) => `/item-${i}`)
  const first = (await load(i => `${url}${byPath.base_path}${paths[i]}`, paths.length, 6)).map(r => r.backend)
  const second = (await load(i => `${url}${byPath.base_path}${paths[i]}`, paths.length, 6)).map(r => r.backend)
  t.same(second, first, 'each path on its target')
  t.equal(new Set(first).size, 3, 'paths spread over the three targets')
  const ip = await load(`${url}${byIp.base_path}/x`, 30, 5)
  t.equal(new Set(ip.map(r => r.backend)).size, 1, 'one client address, one target')
})

t.test('active checks: expected statuses and thresholds decide, whatever the traffic says', async t => {
  let healthz = 200
  const check: Handler = (req, res, body, b) => {
    if (req.url === '/healthz') { res.writeHead(healthz); res.end(); return }
    res.writeHead(200, { 'x-backend': b.name }); res.end('{}')
  }
  const a = await startBackend(t, '127.0.0.2', 'a', 0, check)
  const b = await startBackend(t, '127.0.0.3', 'b')
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: a.url }, { url: b.url }], {
    health_checks: { active: { path: '/healthz', interval_ms: 100, timeout_ms: 1000, healthy_threshold: 3, unhealthy_threshold: 2, expected_statuses: [200, 204] } }
  })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const stateOfA = () => { const s = gateway.upstreamHealth(col.id)?.[0]; if (s === undefined) throw new Error('the collection has no first target'); return s }
  healthz = 500
  await until('a unhealthy', () => stateOfA().state === 'unhealthy')
  t.match(stateOfA().last_error, /health check \/healthz answered 500/)
  t.same(countBy(await load(`${url}${col.base_path}/x`, 20, 2)), { b: 20 }, 'no traffic to an unhealthy target')
  const probes = a.seen.filter(s => s.url === '/healthz').length
  healthz = 204
  await until('a healthy again', () => stateOfA().state === 'healthy')
  t.ok(a.seen.filter(s => s.url === '/healthz').length - probes >= 3, 'after healthy_threshold good probes')
  t.equal(a.seen.find(s => s.url === '/healthz')?.headers['user-agent'], 'gatehouse-health-check')
  t.same(countBy(await load(`${url}${col.base_path}/x`, 20, 1)), { a: 10, b: 10 }, 'traffic again')
})
