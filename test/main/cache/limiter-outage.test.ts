import t from 'tap'
import { Redis } from 'ioredis'
import { quotaPeriod } from '../../../src/main/cache/quota-period.js'
import { createRedis, whenRedisReady } from '../../../src/main/cache/redis.js'
import { createRedisLimiter } from '../../../src/main/cache/redis-limiter.js'
import { eventually, recordingLogger, uniquePrefix } from './shared.js'
import { startRedisServer } from './redis-server.js'

t.test('Redis down: limits fall back to local counting, logged once; quota hits are added back when Redis returns', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const { logger, lines } = recordingLogger()
  const redis = createRedis({ REDIS_URL: server.url }, logger)
  t.teardown(() => redis.disconnect())
  await whenRedisReady(redis)
  const prefix = uniquePrefix('outage')
  const limiter = createRedisLimiter(redis, logger, { keyPrefix: prefix, probeIntervalMs: 50 })

  t.equal((await limiter.hitQuota('p', 5, 'day')).allowed, true)
  t.equal((await limiter.hitQuota('p', 5, 'day')).allowed, true)
  await server.save()
  await server.stop()

  // The local count starts from the 2 Redis last reported: 3 more fit.
  const during = []
  for (let i = 0; i < 4; i++) during.push(await limiter.hitQuota('p', 5, 'day'))
  t.same(during.map(r => r.allowed), [true, true, true, false])
  t.same(during.map(r => r.remaining), [2, 1, 0, 0])
  const window = []
  for (let i = 0; i < 3; i++) window.push(await limiter.hit('w', 2, 60))
  t.same(window.map(r => r.allowed), [true, true, false], 'window limits still apply, per instance')
  t.equal(lines.filter(l => l.component === 'rate-limits').length, 1, 'the outage is logged once')

  await server.start()
  const check = new Redis(server.port, '127.0.0.1')
  t.teardown(() => check.disconnect())
  const key = `${prefix}quota:p:${quotaPeriod('day', Date.now()).stamp}`
  t.ok(await eventually(async () => (await check.get(key).catch(() => null)) === '5'), 'Redis holds the 2 earlier hits plus the 3 made during the outage')
  const after = await limiter.hitQuota('p', 5, 'day')
  t.equal(after.allowed, false, 'the quota stays spent after recovery')
  t.ok(lines.some(l => l.component === 'rate-limits' && String(l.msg).includes('again')), 'recovery is logged')
})

t.test('Redis frozen: once a command times out, hits are answered locally', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const { logger, lines } = recordingLogger()
  const redis = createRedis({ REDIS_URL: server.url }, logger, { commandTimeoutMs: 200 })
  t.teardown(() => redis.disconnect())
  await whenRedisReady(redis)
  const limiter = createRedisLimiter(redis, logger, { keyPrefix: uniquePrefix('frozen'), probeIntervalMs: 60_000 })
  t.equal((await limiter.hit('k', 10, 60)).allowed, true)
  server.freeze()
  t.teardown(() => server.thaw())
  const results = await Promise.all(Array.from({ length: 20 }, () => limiter.hit('k', 10, 60)))
  t.equal(results.filter(r => r.allowed).length, 10, 'the local limiter admits its own limit')
  const more = await limiter.hit('k', 10, 60)
  t.equal(more.allowed, false, 'later hits are counted locally too')
  t.equal(lines.filter(l => l.component === 'rate-limits').length, 1, 'the outage is logged once')
})

t.test('Redis paused with two instances: each enforces its share, so together they stay within the limit', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const prefix = uniquePrefix('paused')
  const limiters = await Promise.all([0, 1].map(async () => {
    const { logger } = recordingLogger()
    const redis = createRedis({ REDIS_URL: server.url }, logger)
    t.teardown(() => redis.disconnect())
    await whenRedisReady(redis)
    return createRedisLimiter(redis, logger, { keyPrefix: prefix, probeIntervalMs: 60_000 })
  }))
  await new Promise(resolve => setTimeout(resolve, 1500)) // heartbeats: both count two members
  server.freeze()
  t.teardown(() => server.thaw())
  const results = await Promise.all(Array.from({ length: 90 }, (_, i) => limiters[i % 2]!.hit('api', 30, 60) /* two limiters */))
  const admitted = results.filter(r => r.allowed).length
  t.equal(admitted, 30, '15 on each instance: a 30/min limit admits 30, not 30 per instance')
})
