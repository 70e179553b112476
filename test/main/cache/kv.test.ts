import t, { type Test } from 'tap'
import { createMemoryKv } from '../../../src/main/cache/memory-kv.js'
import { createRedisKv } from '../../../src/main/cache/redis-kv.js'
import type { KeyValueCache } from '../../../src/main/cache/types.js'
import { eventually, testRedis } from './shared.js'

/** One contract, run against every variant. */
function kvContract (t: Test, make: (t: Test) => Promise<KeyValueCache>) {
  t.test('stores JSON values and answers undefined when missing', async t => {
    const kv = await make(t)
    t.equal(await kv.get('missing'), undefined)
    await kv.set('obj', { a: [1, 'two', null], b: { c: true } })
    t.same(await kv.get('obj'), { a: [1, 'two', null], b: { c: true } })
    await kv.set('null', null)
    t.equal(await kv.get('null'), null)
    await kv.set('n', 42)
    t.equal(await kv.get('n'), 42)
  })

  t.test('a stored value is a copy', async t => {
    const kv = await make(t)
    const value = { list: [1] }
    await kv.set('copy', value)
    value.list.push(2)
    const read = await kv.get('copy') as { list: number[] }
    t.same(read, { list: [1] })
    read.list.push(3)
    t.same(await kv.get('copy'), { list: [1] })
  })

  t.test('overwrite and delete', async t => {
    const kv = await make(t)
    await kv.set('k', 'one')
    await kv.set('k', 'two')
    t.equal(await kv.get('k'), 'two')
    t.equal(await kv.delete('k'), true)
    t.equal(await kv.get('k'), undefined)
    t.equal(await kv.delete('k'), false)
  })

  t.test('a value with a TTL expires; one without stays', async t => {
    const kv = await make(t)
    await kv.set('short', 'x', 50)
    await kv.set('long', 'y')
    t.equal(await kv.get('short'), 'x')
    t.ok(await eventually(async () => await kv.get('short') === undefined), 'expired')
    t.equal(await kv.get('long'), 'y')
  })

  t.test('refuses values JSON cannot hold', async t => {
    const kv = await make(t)
    await t.rejects(kv.set('f', undefined))
  })
}

t.test('memory', async t => kvContract(t, async () => createMemoryKv()))
t.test('redis', async t => kvContract(t, async t => {
  const { redis, prefix } = await testRedis(t, 'kv')
  return createRedisKv(redis, prefix)
}))

t.test('memory evicts the oldest entry past its bound', async t => {
  const kv = createMemoryKv({ maxEntries: 2 })
  await kv.set('a', 1)
  await kv.set('b', 2)
  await kv.set('c', 3)
  t.equal(await kv.get('a'), undefined)
  t.equal(await kv.get('b'), 2)
  t.equal(await kv.get('c'), 3)
})
