/**
 * Distribution per balancing algorithm over real backends on 127.0.0.x: smooth weighted round
 * robin, least connections, consistent hashing (stable keys; removing a target moves only its
 * share), and a host name's addresses followed as its answer changes.
 */
import t, { type Test } from 'tap'
import { balancedCollection, proxy, startGateway } from '../../../helpers/gateway.js'
import { countBy, load, startBackend } from '../../../helpers/backends.js'

// Distribution and counts are the point here: a loaded host must not shed requests (503) in the middle.
const NO_SHED = { SHED_EVENT_LOOP_DELAY_MS: '0' }

const within = (t: Test, share: number, want: number, tol: number, what: string) =>
  t.ok(Math.abs(share - want) <= tol, `${what}: ${(share * 100).toFixed(1)} % (want ${(want * 100).toFixed(0)} ± ${(tol * 100).toFixed(0)} %)`)

t.test('round robin: weights hold over thousands of requests and interleave', async t => {
  const a = await startBackend(t, '127.0.0.2', 'a')
  const b = await startBackend(t, '127.0.0.3', 'b')
  const c = await startBackend(t, '127.0.0.4', 'c')
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: a.url, weight: 500 }, { url: b.url, weight: 100 }, { url: c.url, weight: 100 }])
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])

  const n = 3500
  const counts = countBy(await load(`${url}${col.base_path}/x`, n, 16))
  t.equal((counts.a ?? 0) + (counts.b ?? 0) + (counts.c ?? 0), n, 'every request answered by a target')
  within(t, (counts.a ?? 0) / n, 5 / 7, 0.03, 'a (weight 500)')
  within(t, (counts.b ?? 0) / n, 1 / 7, 0.03, 'b (weight 100)')
  within(t, (counts.c ?? 0) / n, 1 / 7, 0.03, 'c (weight 100)')

  // One at a time: smooth round robin spreads b and c through a's turns (a a b a c a a), never a burst of five a's.
  const seq = (await load(`${url}${col.base_path}/y`, 70, 1)).map(r => r.backend).join('')
  t.notMatch(seq, /aaaaa/, `no burst (${seq})`)
  for (let i = 0; i + 7 <= seq.length; i += 7) {
    const w = seq.slice(i, i + 7)
    t.equal([...w].filter(x => x === 'b').length, 1, `one b in every 7 (${w})`)
  }
})

t.test('least connections: the slow target gets fewer requests', async t => {
  const fast = await startBackend(t, '127.0.0.2', 'fast')
  const slow = await startBackend(t, '127.0.0.3', 'slow', 0, (req, res, body, b) => {
    setTimeout(() => { res.writeHead(200, { 'x-backend': b.name }); res.end('{}') }, 40)
  })
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const col = balancedCollection([{ url: fast.url }, { url: slow.url }], { balancing: 'least_connections' })
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  const n = 2000
  const counts = countBy(await load(`${url}${col.base_path}/x`, n, 12))
  t.equal((counts.fast ?? 0) + (counts.slow ?? 0), n)
  t.ok((counts.fast ?? 0) / n > 0.65, `fast target served ${counts.fast} of ${n}`)
  // Sequential requests have no connections to compare: they alternate.
  const seq = countBy(await load(`${url}${col.base_path}/x`, 40, 1))
  t.same(seq, { fast: 20, slow: 20 }, 'equal targets share when idle')
})

t.test('consistent hashing: keys stay on their target; removing one moves only its keys', async t => {
  // A tuple, one backend per name: bs[0]..bs[2] are typed as present.
  const bs = await Promise.all([startBackend(t, '127.0.0.2', 'a'), startBackend(t, '127.0.0.3', 'b'), startBackend(t, '127.0.0.4', 'c')])
  const { gateway, url } = await startGateway(t, {}, NO_SHED)
  const users = Array.from({ length: 600 }, (_, i) => `user-${i}`)
  const col = balancedCollection(bs.map(b => ({ url: b.url })), { balancing: 'consistent_hash', hash_on: 'header:x-user' })
  const p = proxy(col, { path: '/*', target_path: '/*' })
  gateway.setRoutes([col], [p])
  const where = async (): Promise<string[]> => (await load(`${url}${col.base_path}/x`, users.length, 12, i => ({ headers: { 'x-user': users[i]! } }))).map(r => r.backend!)
  const first = await where()
  t.same(await where(), first, 'every key on the same target again')
  const counts = countBy(first.map(backend => ({ backend })))
  for (const n of ['a', 'b', 'c']) within(t, (counts[n] ?? 0) / users.length, 1 / 3, 0.1, `share of ${n}`)

  const fewer = { ...balancedCollection([{ url: bs[0].url }, { url: bs[1].url }], { balancing: 'consistent_hash', hash_on: 'header:x-user' }), id: col.id, base_path: col.base_path, version: 2 }
  gateway.setRoutes([fewer], [p])
  const after = await where()
  let moved = 0
  for (let i = 0; i < users.length; i++) {
    if (first[i] !== 'c') t.equal(after[i], first[i], `${users[i]} stays on ${first[i]}`, { diagnostic: false })
    else { moved++; t.not(after[i], 'c') }
  }
  t.equal(moved, counts.c, "only c's keys moved")

  // The cookie and path keys work the same way.
  const byCookie = { ...balancedCollection(bs.map(b => ({ url: b.url })), { balancing: 'consistent_hash', hash_on: 'cookie:session' }), id: col.id, base_path: col.base_path, version: 3 }
  gateway.setRoutes([byCookie], [p])
  const c1 = await load(`${url}${col.base_path}/x`, 30, 6, () => ({ headers: { cookie: 'theme=dark; session=abc123' } }))
  t.equal(new Set(c1.map(r => r.backend)).size, 1, 'one session, one target')
})

t.test('a host name is balanced across its addresses and followed when they change', async t => {
  const one = await startBackend(t, '127.0.0.2', 'one')
  const two = await startBackend(t, '127.0.0.3', 'two', one.port)
  const three = await startBackend(t, '127.0.0.4', 'three', one.port)
  let answer = ['127.0.0.2', '127.0.0.3']
  const { gateway, url } = await startGateway(t, {}, { ...NO_SHED, UPSTREAM_DNS_REFRESH_MS: '200' }, {
    lookup: (host, done) => { setImmediate(() => done(host === 'api.test' ? null : new Error('unknown'), host === 'api.test' ? answer : [])) }
  })
  const col = balancedCollection([{ url: `http://api.test:${one.port}` }])
  gateway.setRoutes([col], [proxy(col, { path: '/*', target_path: '/*' })])
  await new Promise(resolve => setTimeout(resolve, 100))
  let counts = countBy(await load(`${url}${col.base_path}/x`, 400, 8))
  t.same(counts, { one: 200, two: 200 }, 'both addresses share the target')
  t.equal(one.seen[0]?.headers.host, `api.test:${one.port}`, 'the target host name is the Host header')
  answer = ['127.0.0.3', '127.0.0.4']
  await new Promise(resolve => setTimeout(resolve, 600))
  counts = countBy(await load(`${url}${col.base_path}/x`, 400, 8))
  t.same(counts, { two: 200, three: 200 }, 'the new answer replaced the old addresses')
  const health = gateway.upstreamHealth(col.id)!
  t.same(health[0]?.addresses.map(a => a.address), ['127.0.0.3', '127.0.0.4'])
})
