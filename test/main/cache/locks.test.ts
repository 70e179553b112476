import t, { type Test } from 'tap'
import { createMemoryLocks } from '../../../src/main/cache/memory-locks.js'
import { createRedisLocks } from '../../../src/main/cache/redis-locks.js'
import type { LockManager } from '../../../src/main/cache/types.js'
import { eventually, recordingLogger, testRedis } from './shared.js'
import { startRedisServer } from './redis-server.js'

function locksContract (t: Test, make: (t: Test) => Promise<LockManager>) {
  t.test('one owner at a time; the holder may take it again', async t => {
    const locks = await make(t)
    t.equal(await locks.acquire('imap:1', 10_000, 'a'), true)
    t.equal(await locks.acquire('imap:1', 10_000, 'b'), false)
    t.equal(await locks.acquire('imap:1', 10_000, 'a'), true)
    t.equal(await locks.acquire('imap:2', 10_000, 'b'), true, 'other names are independent')
  })

  t.test('renew and release check the owner', async t => {
    const locks = await make(t)
    await locks.acquire('l', 10_000, 'a')
    t.equal(await locks.renew('l', 10_000, 'b'), false)
    t.equal(await locks.release('l', 'b'), false)
    t.equal(await locks.acquire('l', 10_000, 'b'), false, 'still held by a')
    t.equal(await locks.renew('l', 10_000, 'a'), true)
    t.equal(await locks.release('l', 'a'), true)
    t.equal(await locks.release('l', 'a'), false)
    t.equal(await locks.renew('l', 10_000, 'a'), false, 'nothing to renew after release')
    t.equal(await locks.acquire('l', 10_000, 'b'), true)
  })

  t.test('an expired lease can be taken by another owner', async t => {
    const locks = await make(t)
    await locks.acquire('e', 50, 'a')
    t.ok(await eventually(() => locks.acquire('e', 10_000, 'b')))
    t.equal(await locks.renew('e', 10_000, 'a'), false)
  })

  t.test('claimOnce admits one caller per key until it expires', async t => {
    const locks = await make(t)
    t.equal(await locks.claimOnce('cron:p1:2024-01-01T00:00', 10_000), true)
    t.equal(await locks.claimOnce('cron:p1:2024-01-01T00:00', 10_000), false)
    t.equal(await locks.claimOnce('cron:p1:2024-01-01T00:01', 10_000), true)
    t.equal(await locks.claimOnce('short', 50), true)
    t.ok(await eventually(() => locks.claimOnce('short', 10_000)))
  })

  t.test('parallel acquires: exactly one wins', async t => {
    const locks = await make(t)
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => locks.acquire('race', 10_000, `o${i}`)))
    t.equal(wins.filter(Boolean).length, 1)
  })
}

t.test('memory', async t => locksContract(t, async () => createMemoryLocks()))
t.test('redis', async t => locksContract(t, async t => {
  const { redis, prefix, logger } = await testRedis(t, 'locks')
  return createRedisLocks(redis, prefix, logger)
}))

t.test('redis: two connections, one owner', async t => {
  const a = await testRedis(t, 'locks2')
  const b = await testRedis(t, 'locks2')
  const la = createRedisLocks(a.redis, a.prefix, a.logger)
  const lb = createRedisLocks(b.redis, a.prefix, b.logger)
  t.equal(await la.acquire('shared', 10_000, 'instance-a'), true)
  t.equal(await lb.acquire('shared', 10_000, 'instance-b'), false)
  t.equal(await lb.claimOnce('slot', 10_000), true)
  t.equal(await la.claimOnce('slot', 10_000), false)
})

t.test('redis unreachable: every call answers false, logged once', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const { logger, lines } = recordingLogger()
  const { redis, prefix } = await testRedis(t, 'locks-down', server.url)
  const locks = createRedisLocks(redis, prefix, logger)
  t.equal(await locks.acquire('x', 10_000, 'a'), true)
  await server.stop()
  t.equal(await locks.acquire('y', 10_000, 'a'), false)
  t.equal(await locks.renew('x', 10_000, 'a'), false)
  t.equal(await locks.claimOnce('z', 10_000), false)
  t.equal(lines.filter(l => l.component === 'locks').length, 1)
  await server.start()
  t.ok(await eventually(() => locks.acquire('y', 10_000, 'a')), 'works again once Redis is back')
})
