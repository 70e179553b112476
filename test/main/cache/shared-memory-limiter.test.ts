/**
 * The shared-memory limiter (GATEWAY_THREADS with CACHE_TYPE=memory): the memory limiter's
 * semantics, and exact counts when several threads hit the same keys at once.
 */
import { Worker } from 'node:worker_threads'
import t from 'tap'
import { createLimiterMemory, createSharedMemoryLimiter } from '../../../src/main/cache/shared-memory-limiter.js'

const DIST = new URL('../../../dist/src/main/cache/shared-memory-limiter.js', import.meta.url).href

t.test('windows, refusals and quotas as the memory limiter has them', async t => {
  let now = 1_000_000
  const l = createSharedMemoryLimiter(createLimiterMemory(1024), () => now)
  t.match(l.sync.hit('a', 2, 60), { allowed: true, remaining: 1, resetSeconds: 60 })
  t.match(l.sync.hit('a', 2, 60), { allowed: true, remaining: 0 })
  t.match(l.sync.hit('a', 2, 60), { allowed: false, remaining: 0 }, 'refused past the limit')
  t.match(l.sync.hit('b', 2, 60), { allowed: true, remaining: 1 }, 'another key counts apart')
  now += 60_000
  t.match(l.sync.hit('a', 2, 60), { allowed: true, remaining: 1 }, 'a new window after the reset')
  const seen: unknown[] = []
  l.quotas.listen((...a) => { seen.push(a) })
  l.quotas.seed('q1', new Date(now).toISOString().slice(0, 10), now + 3_600_000, 4)
  t.match(l.sync.hitQuota('q1', 5, 'day'), { allowed: true, remaining: 0 }, 'a seeded quota goes on from its count')
  t.match(l.sync.hitQuota('q1', 5, 'day'), { allowed: false })
  t.equal(seen.length, 1, 'admitted quota hits are told, refused ones are not')
})

t.test('a full probe window takes over the counter that ends soonest', async t => {
  const l = createSharedMemoryLimiter(createLimiterMemory(32))
  for (let i = 0; i < 100; i++) t.equal(l.sync.hit(`k${i}`, 1, 60 + i).allowed, true)
  t.equal(l.sync.hit('k99', 1, 60).allowed, false, 'the newest counters are kept')
})

t.test('threads hitting the same keys at once count exactly', async t => {
  const memory = createLimiterMemory()
  const code = `
    const { workerData, parentPort } = require('node:worker_threads')
    import(workerData.dist).then(({ createSharedMemoryLimiter }) => {
      const l = createSharedMemoryLimiter(workerData.memory)
      const admitted = {}
      for (let i = 0; i < 20000; i++) {
        const key = 'key' + (i % 8)
        if (l.sync.hit(key, 6000, 300).allowed) admitted[key] = (admitted[key] || 0) + 1
      }
      parentPort.postMessage(admitted)
    })`
  const run = async () => await new Promise<Record<string, number>>((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { memory, dist: DIST } })
    w.once('message', resolve)
    w.once('error', reject)
  })
  const results = await Promise.all([run(), run(), run()])
  for (let k = 0; k < 8; k++) {
    const total = results.reduce((n, r) => n + (r[`key${k}`] ?? 0), 0)
    t.equal(total, 6000, `key${k}: 7,500 attempts over three threads, exactly 6,000 admitted`)
  }
})
