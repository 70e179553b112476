import t, { type Test } from 'tap'
import { createMemoryLimiter } from '../../../src/main/cache/memory-limiter.js'
import { createRedisLimiter } from '../../../src/main/cache/redis-limiter.js'
import type { RateLimiter } from '../../../src/main/cache/types.js'
import { eventually, testRedis } from './shared.js'

function limiterContract (t: Test, make: (t: Test) => Promise<RateLimiter>) {
  t.test('admits the limit per window, then refuses; refused hits do not count', async t => {
    const l = await make(t)
    const results = []
    for (let i = 0; i < 5; i++) results.push(await l.hit('p1', 3, 60))
    t.same(results.map(r => r.allowed), [true, true, true, false, false])
    t.same(results.map(r => r.remaining), [2, 1, 0, 0, 0])
    for (const r of results) t.ok(r.resetSeconds >= 1 && r.resetSeconds <= 60, `reset ${r.resetSeconds}`)
    t.equal((await l.hit('p2', 3, 60)).allowed, true, 'other keys are independent')
  })

  t.test('cost counts several units; a hit that would pass the limit is refused whole', async t => {
    const l = await make(t)
    t.same(await l.hit('c', 5, 60, 3).then(r => [r.allowed, r.remaining]), [true, 2])
    t.same(await l.hit('c', 5, 60, 3).then(r => [r.allowed, r.remaining]), [false, 2])
    t.same(await l.hit('c', 5, 60, 2).then(r => [r.allowed, r.remaining]), [true, 0])
  })

  t.test('a new window starts when the old one ends', async t => {
    const l = await make(t)
    t.equal((await l.hit('w', 1, 1)).allowed, true)
    t.equal((await l.hit('w', 1, 1)).allowed, false)
    t.ok(await eventually(async () => (await l.hit('w', 1, 1)).allowed))
  })

  t.test('quotas per UTC day and month', async t => {
    const l = await make(t)
    t.same((await Promise.all([1, 2, 3].map(() => l.hitQuota('q', 2, 'day')))).map(r => r.allowed).sort(), [false, true, true])
    const day = await l.hitQuota('q', 2, 'day')
    t.equal(day.remaining, 0)
    t.ok(day.resetSeconds >= 1 && day.resetSeconds <= 86_400, 'resets by the end of the UTC day')
    const month = await l.hitQuota('q', 2, 'month')
    t.equal(month.allowed, true, 'the month counter is separate from the day counter')
    t.equal(month.remaining, 1)
    t.ok(month.resetSeconds >= 1 && month.resetSeconds <= 31 * 86_400)
  })
}

t.test('memory', async t => limiterContract(t, async () => createMemoryLimiter()))
t.test('redis', async t => limiterContract(t, async t => {
  const { redis, prefix, logger } = await testRedis(t, 'limiter')
  return createRedisLimiter(redis, logger, { keyPrefix: prefix })
}))

t.test('redis: a parallel burst from two instances admits exactly the limit', async t => {
  const a = await testRedis(t, 'burst')
  const b = await testRedis(t, 'burst')
  const la = createRedisLimiter(a.redis, a.logger, { keyPrefix: a.prefix })
  const lb = createRedisLimiter(b.redis, b.logger, { keyPrefix: a.prefix })
  const N = 100
  const L = 37
  const hits = Array.from({ length: N }, (_, i) => (i % 2 === 0 ? la : lb).hit('burst', L, 60))
  const quota = Array.from({ length: N }, (_, i) => (i % 2 === 0 ? la : lb).hitQuota('burst', L, 'month'))
  const [r1, r2] = await Promise.all([Promise.all(hits), Promise.all(quota)])
  t.equal(r1.filter(r => r.allowed).length, L)
  t.equal(r2.filter(r => r.allowed).length, L)
})

t.test('redis: a policy hit (rate limit then quota in one round trip) answers as hit() then hitQuota() do', async t => {
  const { redis, prefix, logger } = await testRedis(t, 'policy')
  const l = createRedisLimiter(redis, logger, { keyPrefix: prefix })
  const both = async (rateLimit: number, quotaLimit: number, key: string) =>
    await l.hitPolicy!({ key: `r-${key}`, limit: rateLimit, windowSeconds: 60 }, { key: `q-${key}`, limit: quotaLimit, period: 'month' })
  // Quota tighter than the rate limit: the third hit passes the rate limit and is refused by the quota.
  const a = [await both(5, 2, 'a'), await both(5, 2, 'a'), await both(5, 2, 'a')] as const
  t.same(a.map(([r, q]) => [r.allowed, q?.allowed]), [[true, true], [true, true], [true, false]])
  t.same(a.map(([r, q]) => [r.remaining, q?.remaining]), [[4, 1], [3, 0], [2, 0]])
  t.ok(a[0][1]!.resetSeconds > 0 && a[0][0].resetSeconds <= 60)
  // Rate limit tighter: a refused rate limit spends no quota.
  const b = [await both(1, 10, 'b'), await both(1, 10, 'b'), await both(1, 10, 'b')]
  t.same(b.map(([r, q]) => [r.allowed, q?.allowed ?? null]), [[true, true], [false, null], [false, null]])
  t.same((await l.hitQuota('q-b', 10, 'month')).remaining, 8, 'only the admitted hit counted against the quota')
  // The same counters as the separate calls.
  t.equal((await l.hit('r-a', 5, 60)).remaining, 1)
})

t.test('redis: every counter key expires, and a refused first hit leaves no key behind', async t => {
  const { redis, prefix, logger } = await testRedis(t, 'keys')
  const l = createRedisLimiter(redis, logger, { keyPrefix: prefix })
  await l.hit('k', 3, 60)
  await l.hit('k', 3, 60)
  const rateTtl = await redis.pttl(`${prefix}rate:k`)
  t.ok(rateTtl > 58_000 && rateTtl <= 60_000, `the window's expiry is set once, by its first hit (${rateTtl} ms)`)
  await l.hitPolicy!({ key: 'pk', limit: 5, windowSeconds: 30 }, { key: 'pq', limit: 5, period: 'day' })
  const keys = (await redis.keys(`${prefix}*`)).filter(k => !k.endsWith('limiter:members')).sort()
  t.equal(keys.length, 3)
  for (const k of keys) t.ok(await redis.pttl(k) > 0, `${k.slice(prefix.length)} expires`)
  t.equal((await l.hit('zero', 0, 60)).allowed, false, 'a limit of 0 refuses')
  t.equal((await l.hitQuota('zero', 0, 'month')).allowed, false)
  t.equal(await redis.exists(`${prefix}rate:zero`), 0, 'no key left at 0 without an expiry')
  t.same(await redis.keys(`${prefix}quota:zero:*`), [])
  // A refused hit on a live counter leaves its count and expiry as they were.
  const before = await redis.pttl(`${prefix}rate:k`)
  t.same(await l.hit('k', 3, 60, 2).then(r => [r.allowed, r.remaining]), [false, 1])
  t.equal(await redis.get(`${prefix}rate:k`), '2')
  t.ok(await redis.pttl(`${prefix}rate:k`) <= before, 'the refused hit did not extend the window')
})

t.test('memory: a new window reports its full length, however the clock ticks between readings', async t => {
  let ms = Date.UTC(2026, 10, 25, 8, 0, 0, 999)
  const l = createMemoryLimiter(() => ms++) // each reading is a millisecond later
  const r = await l.hit('tick', 3, 60)
  t.equal(r.resetSeconds, 60, 'a 60 s window resets in 60 s, not 61')
})
