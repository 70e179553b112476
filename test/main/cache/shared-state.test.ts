import t from 'tap'
import { pino } from 'pino'
import { whenRedisReady } from '../../../src/main/cache/redis.js'
import { createSharedState } from '../../../src/main/cache/shared-state.js'
import { REDIS_URL, uniquePrefix } from './shared.js'

const logger = pino({ level: 'silent' })

t.test('CACHE_TYPE memory: no Redis connection, working primitives', async t => {
  const state = createSharedState({ config: { CACHE_TYPE: 'memory', REDIS_URL }, logger })
  t.teardown(() => state.close())
  t.equal(state.redis, undefined)
  await state.kv.set('k', { v: 1 })
  t.same(await state.kv.get('k'), { v: 1 })
  t.equal(await state.locks.acquire('l', 1000, 'a'), true)
  t.equal((await state.limiter.hit('r', 1, 60)).allowed, true)
})

t.test('CACHE_TYPE redis: two states share limits, locks and values', async t => {
  const keyPrefix = uniquePrefix('state')
  const a = createSharedState({ config: { CACHE_TYPE: 'redis', REDIS_URL }, logger, keyPrefix })
  const b = createSharedState({ config: { CACHE_TYPE: 'redis', REDIS_URL }, logger, keyPrefix })
  t.teardown(async () => {
    const keys = await a.redis!.keys(`${keyPrefix}*`)
    if (keys.length > 0) await a.redis!.del(...keys)
    await a.close()
    await b.close()
  })
  await whenRedisReady(a.redis!)
  await whenRedisReady(b.redis!)
  await a.kv.set('k', 'shared', 10_000)
  t.equal(await b.kv.get('k'), 'shared')
  t.equal(await a.locks.acquire('l', 10_000, 'a'), true)
  t.equal(await b.locks.acquire('l', 10_000, 'b'), false)
  t.equal((await a.limiter.hitQuota('q', 1, 'day')).allowed, true)
  t.equal((await b.limiter.hitQuota('q', 1, 'day')).allowed, false)
})
