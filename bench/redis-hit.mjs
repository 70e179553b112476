// What one rate-limit call costs the gateway's CPU with CACHE_TYPE=redis, in this process against
// the local Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379): 100,000 calls, 50 in flight
// (each answer starts the next, as requests on 50 connections), 3 rounds, alternating:
// - the limiter's hitPolicy (rate limit + quota, what an authenticated request with a policy does:
//   dist/…/redis-limiter.js, its script over the RedisPipe);
// - the same HIT_POLICY-sized script by EVALSHA over the RedisPipe alone;
// - the same EVALSHA through ioredis (enableAutoPipelining, as the service opens Redis), which the
//   limiter used before the pipe.
// Prints CPU µs per call of this process (Redis's own CPU is not counted) and wall µs per call.
// Run after `npm run build`:
//   node bench/redis-hit.mjs
import { pino } from 'pino'
import { createRedis, defineScript, whenRedisReady } from '../dist/src/main/cache/redis.js'
import { createRedisLimiter } from '../dist/src/main/cache/redis-limiter.js'
import { RedisPipe } from '../dist/src/main/cache/redis-pipe.js'

const URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const N = 100_000
const IN_FLIGHT = 50
const logger = pino({ level: 'silent' })
const prefix = `gh-bench-hit:${process.pid}:`

async function drive (call) {
  let started = 0
  let done = 0
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  await new Promise((resolve, reject) => {
    const next = () => {
      if (started >= N) { if (done === N) resolve(); return }
      started++
      call().then(() => { done++; next() }, reject)
    }
    for (let i = 0; i < IN_FLIGHT; i++) next()
  })
  const cpu = process.cpuUsage(cpu0)
  return { cpu: (cpu.user + cpu.system) / N, wall: (performance.now() - wall0) * 1000 / N }
}

const redis = createRedis({ REDIS_URL: URL }, logger)
await whenRedisReady(redis)
const limiter = createRedisLimiter(redis, logger, { keyPrefix: prefix })
const pipe = new RedisPipe(redis.options, { deadlineMs: 1000 })
const script = defineScript(`local a = redis.call('INCRBY', KEYS[1], 1)
local b = redis.call('INCRBY', KEYS[2], 1)
return {1, a, redis.call('PTTL', KEYS[1]), 1, b}`)
await redis.script('LOAD', script.source)
const keys = [`${prefix}a`, `${prefix}b`]
const args = [1, 1e9, 60_000, 1e9, 86_400_000]
const variants = {
  'limiter hitPolicy (pipe)': () => limiter.hitPolicy({ key: 'bench', limit: 1e9, windowSeconds: 60 }, { key: 'bench', limit: 1e9, period: 'month' }),
  'EVALSHA over the pipe': () => pipe.evalsha(script, keys, args),
  'EVALSHA through ioredis': () => redis.evalsha(script.sha, keys.length, ...keys, ...args)
}
const results = Object.fromEntries(Object.keys(variants).map(k => [k, []]))
for (let round = 0; round < 3; round++) {
  for (const [name, call] of Object.entries(variants)) results[name].push(await drive(call))
}
for (const [name, rounds] of Object.entries(results)) {
  console.log(`${name.padEnd(26)} CPU µs/call ${rounds.map(r => r.cpu.toFixed(1)).join(', ')}   wall µs/call ${rounds.map(r => r.wall.toFixed(1)).join(', ')}`)
}
const stale = await redis.keys(`${prefix}*`)
if (stale.length > 0) await redis.del(...stale)
pipe.close()
redis.disconnect()
