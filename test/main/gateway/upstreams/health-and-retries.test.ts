/**
 * Real backends on 127.0.0.x killed and restarted under load: passive ejection, active checks,
 * not-sent retries for any method, idempotent retries within the budget, never a POST twice,
 * never a streamed body, and the in-flight cap.
 */
import t from 'tap'
import { balancedCollection, proxy, startGateway } from '../../../helpers/gateway.js'
import { countBy, load, startBackend, type Handler } from '../../../helpers/backends.js'

// Distribution and counts are the point here: a loaded host must not shed requests (503) in the middle.
const NO_SHED = { SHED_EVENT_LOOP_DELAY_MS: '0' }

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
async function until (what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}
const unavailable: Handler = (req, res, body, b) => { res.writeHead(503, { 'x-backend': b.name }); res.end('busy') }

/** Steady GETs, `concurrency` at a time, until stopped; counts answers by status and backend. */
function steadyLoad (url: string, concurrency: number): { stop: () => Promise<Array<{ status: number, backend: string | null }>> } {
  const out: Array<{ status: number, backend: string | null }> = []
  let running = true
  const worker = async (): Promise<void> => {
    while (running) {
      try {
        const res = await fetch(url)
        await res.text()
        out.push({ status: res.status, backend: res.headers.get('x-backend') })
      } catch { out.push({ status: 0, backend: null }) }
    }
  }
  const done = Promise.all(Array.from({ length: concurrency }, worker))
  return { async stop () { running = false; await done; return out } }
}

t.test('a target killed under steady load: GETs keep succeeding, it is ejected, and comes back when healthy', async t => {
  // A tuple, one backend per name: bs[0]..bs[2] are typed as present.
  const bs = await Promise.all([startBackend(t, '127.0.0.2', 'a'), startBackend(t, '127.0.0.3', 'b'), startBackend(t, '127.0.0.4', 'c')])
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection(bs.map(b => ({ url: b.url })), {
    health_checks: {
      passive: { consecutive_failures: 3, ejection_ms: 1000, max_ejection_percent: 50 },
      active: { path: '/healthz', interval_ms: 200, timeout_ms: 1000, healthy_threshold: 2, unhealthy_threshold: 2 }
    },
    retries: { attempts: 2, budget_percent: 50 }
  })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const stateOf = (name: string) => gateway.upstreamHealth(col.id)!.find(x => x.url === bs.find(b => b.name === name)!.url)!.state

  const run = steadyLoad(`${url}${col.base_path}/items`, 8)
  await until('traffic on every target', () => bs.every(b => b.hits > 50))
  await bs[1].stop()
  await until('b held out', () => stateOf('b') !== 'healthy')
  const hitsWhileOut = bs[0].hits + bs[2].hits
  await until('traffic after b left', () => bs[0].hits + bs[2].hits > hitsWhileOut + 300)
  t.not(stateOf('b'), 'healthy', `b is ${stateOf('b')} while down`)
  const h = gateway.upstreamHealth(col.id)!.find(x => x.state !== 'healthy')!
  t.match(h, { url: bs[1].url, last_error: /ECONNREFUSED|connection|health check/ })
  await bs[1].start()
  const before = bs[1].hits
  await until('b healthy again', () => stateOf('b') === 'healthy')
  await until('b serving again', () => bs[1].hits > before + 50)
  const answers = await run.stop()
  const failed = answers.filter(a => a.status !== 200)
  t.same(failed, [], `every one of ${answers.length} GETs answered 200 (retried past the killed target)`)
  t.ok((countBy(answers).b ?? 0) > 0, 'b served before and after')
})

t.test('without retries, at most the requests in flight to the killed target fail', async t => {
  const start = (host: string, name: string) => startBackend(t, host, name, 0, (req, res, body, b) => {
    setTimeout(() => { res.writeHead(200, { 'x-backend': b.name }); res.end('{}') }, 5)
  })
  const bs = await Promise.all([start('127.0.0.2', 'a'), start('127.0.0.3', 'b'), start('127.0.0.4', 'c')])
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection(bs.map(b => ({ url: b.url })), { health_checks: { passive: { consecutive_failures: 3, ejection_ms: 2000, max_ejection_percent: 50 } } })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const concurrency = 6
  const run = steadyLoad(`${url}${col.base_path}/items`, concurrency)
  await until('traffic on every target', () => bs.every(b => b.hits > 30))
  await bs[1].stop()
  await until('b ejected', () => gateway.upstreamHealth(col.id)?.[1]?.state === 'ejected')
  const after = bs[0].hits + bs[2].hits
  await until('traffic after', () => bs[0].hits + bs[2].hits > after + 300)
  const answers = await run.stop()
  const failed = answers.filter(a => a.status !== 200)
  t.ok(failed.length <= concurrency, `${failed.length} of ${answers.length} failed (at most the ${concurrency} in flight)`)
  t.ok(failed.every(f => f.status === 502), 'those answered 502')
})

t.test('retries: never a POST twice, a buffered body replayed exactly, never a streamed body, within the budget', async t => {
  const down = await startBackend(t, '127.0.0.2', 'down', 0, unavailable)
  const up = await startBackend(t, '127.0.0.3', 'up')
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  // Round robin over [down, up]: every other request starts on the failing target.
  const col = balancedCollection([{ url: down.url }, { url: up.url }], { retries: { attempts: 1, budget_percent: 100 }, health_checks: { passive: null } })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*', methods: ['GET', 'POST', 'PUT'] })])
  const base = `${url}${col.base_path}`

  const gets = await load(`${base}/g`, 20, 1)
  t.same(countBy(gets), { up: 20 }, 'GETs that met a 503 were retried on the other target')
  t.equal(down.hits, 10)

  down.hits = 0; up.hits = 0
  const posts = await load(`${base}/p`, 20, 1, i => ({ method: 'POST', body: `order-${i}`, headers: { 'content-type': 'text/plain' } }))
  t.equal(down.hits + up.hits, 20, 'each POST reached a backend exactly once')
  t.equal(posts.filter(p => p.status === 503).length, down.hits, "the failing target's 503 went back to the client")

  down.hits = 0; up.hits = 0; up.seen.length = 0
  const body = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251))
  const puts = await load(`${base}/u`, 4, 1, () => ({ method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } }))
  t.same(countBy(puts), { up: 4 })
  t.ok(up.seen.every(s => Buffer.from(s.body, 'latin1').length > 0), 'bodies arrived')
  t.equal(down.hits, 2, 'two PUTs met the failing target first')
  for (const s of up.seen) t.equal(s.body, body.toString(), 'the replayed body is the same bytes')

  // A streamed (chunked) upload is never sent twice.
  down.hits = 0; up.hits = 0
  const streamed = async () => {
    const res = await fetch(`${base}/s`, {
      method: 'PUT',
      body: new ReadableStream({ start (c) { c.enqueue(new TextEncoder().encode('part-1,')); c.enqueue(new TextEncoder().encode('part-2')); c.close() } }),
      // Node's fetch needs duplex for a stream body
      duplex: 'half'
    })
    await res.text()
    return res.status
  }
  const statuses = [await streamed(), await streamed()]
  t.equal(down.hits + up.hits, 2, 'each streamed upload reached one backend once')
  t.same(statuses.sort(), [200, 503])

  // Budget: every target failing, 3 attempts allowed per request, 20 % of requests as retries.
  const col2 = balancedCollection([{ url: down.url }, { url: `http://127.0.0.4:${down.port}` }], { retries: { attempts: 3, budget_percent: 20 }, health_checks: { passive: null } }, { id: 'budget', base_path: '/budget' })
  const other = await startBackend(t, '127.0.0.4', 'down2', down.port, unavailable)
  gateway.setRoutes([col, col2], [proxy(col2, { path: '/*', target_path: '/*' })])
  down.hits = 0
  const n = 100
  const res = await load(`${url}/budget/x`, n, 4)
  const hits = down.hits + other.hits
  t.ok(res.every(r => r.status === 503), 'the clients see the 503')
  t.ok(hits >= n + 3 && hits <= n + 20 + 1, `${hits - n} retries for ${n} requests (budget 20 %, not ${n * 3})`)
})

t.test('the in-flight cap: past it another target, then 503 with Retry-After', async t => {
  const slow: Handler = (req, res, body, b) => { setTimeout(() => { res.writeHead(200, { 'x-backend': b.name }); res.end('{}') }, 1500) }
  const a = await startBackend(t, '127.0.0.2', 'a', 0, slow)
  const b = await startBackend(t, '127.0.0.3', 'b', 0, slow)
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: a.url }, { url: b.url }], { max_in_flight_per_target: 2 })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const answers = await Promise.all(Array.from({ length: 6 }, async () => {
    const res = await fetch(`${url}${col.base_path}/x`)
    await res.text()
    return { status: res.status, backend: res.headers.get('x-backend'), retryAfter: res.headers.get('retry-after') }
  }))
  t.equal(answers.filter(x => x.status === 200).length, 4, 'two per target')
  t.same(countBy(answers.filter(x => x.status === 200)), { a: 2, b: 2 })
  const refused = answers.filter(x => x.status === 503)
  t.equal(refused.length, 2)
  t.ok(refused.every(x => x.retryAfter === '1'), 'with Retry-After')
})
