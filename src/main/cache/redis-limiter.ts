/**
 * Rate limits and quotas shared by every instance through Redis.
 *
 *   hit ──Redis up──▶ HIT script (check + INCRBY + PEXPIRE, atomic) ──▶ result
 *                     (sent on a RedisPipe of its own: the request path's one Redis call)
 *     └──Redis down──▶ local counters (logged once)
 *                        quota hits also add to `pending`, starting from the
 *                        last count Redis reported for that key
 *   Redis back (a PING probe, at most once a second, or the `ready` event)
 *     ──▶ pending quota hits are added to Redis (INCRBY) ──▶ Redis again
 *
 * While down, no hit waits for Redis: a frozen server would otherwise cost
 * every request the command timeout, and timed-out increments that still run
 * later would count twice. A hit waits at most LIMIT_WAIT_MS for Redis before
 * it is answered locally (no request stalls on a paused server); the pipe then
 * drops its connection and the probe connects it again.
 *
 * Degraded mode, each instance enforcing its share: the limiters register in a
 * Redis sorted set (heartbeat every second, members gone for 15 s dropped), so
 * each knows how many instances share the limits. While Redis is down an
 * instance admits floor(limit / instances) per window (at least 1), and of a
 * quota's remainder its share, so the instances together stay within the limit.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from '../logger.js'
import { createMemoryLimiter } from './memory-limiter.js'
import { quotaPeriod, secondsUntil } from './quota-period.js'
import { createOutageLog, defineScript, runScript } from './redis.js'
import { RedisPipe, type PipeTarget } from './redis-pipe.js'
import type { HitResult, RateLimiter } from './types.js'

// The count goes up first and back down when it passes the limit (a refused hit counts nothing):
// in the common case a rate key costs Redis two calls (INCRBY, PTTL) and a quota key one (its
// reset comes from the period, not from Redis), where reading before writing took three each.
// A key is given its expiry when this hit created it (the count equals the cost); one that a
// refused first hit would leave at 0 is removed.
// KEYS[1] counter; ARGV cost, limit, ttl ms. Returns {admitted 0|1, count, pttl}.
const HIT = defineScript(`
local cost = tonumber(ARGV[1])
local cur = redis.call('INCRBY', KEYS[1], cost)
if cur == cost then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if cur > tonumber(ARGV[2]) then
  cur = redis.call('DECRBY', KEYS[1], cost)
  if cur <= 0 then redis.call('DEL', KEYS[1]) end
  return {0, cur, redis.call('PTTL', KEYS[1])}
end
return {1, cur, redis.call('PTTL', KEYS[1])}`)
// The rate key (KEYS[1]) as HIT does, then, only when admitted, the quota key (KEYS[2]): one round
// trip for a policy with both. ARGV cost, rate limit, rate ttl ms, quota limit, quota ttl ms.
// Returns {admitted, count, pttl} for the rate, then {admitted, count} for the quota ({-1, 0}: not counted).
const HIT_POLICY = defineScript(`
local cost = tonumber(ARGV[1])
local function hit (key, limit, ttlms)
  local cur = redis.call('INCRBY', key, cost)
  if cur == cost then redis.call('PEXPIRE', key, ttlms) end
  if cur <= limit then return 1, cur end
  cur = redis.call('DECRBY', key, cost)
  if cur <= 0 then redis.call('DEL', key) end
  return 0, cur
end
local a1, c1 = hit(KEYS[1], tonumber(ARGV[2]), ARGV[3])
local t1 = redis.call('PTTL', KEYS[1])
if a1 == 0 then return {a1, c1, t1, -1, 0} end
local a2, c2 = hit(KEYS[2], tonumber(ARGV[4]), ARGV[5])
return {a1, c1, t1, a2, c2}`)
// KEYS[1] members zset; ARGV member, now ms, stale before ms. Returns the live member count.
const MEMBER = defineScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('PEXPIRE', KEYS[1], 60000)
return redis.call('ZCARD', KEYS[1])`)
const ADD = defineScript(`
redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`)

// Quota keys outlive their period by a day so a clock a little behind still finds them.
const QUOTA_GRACE_MS = 86_400_000
const MAX_KNOWN = 100_000
/** How long a hit waits for Redis before it is answered locally. */
const LIMIT_WAIT_MS = 250
const MEMBER_HEARTBEAT_MS = 1000
const MEMBER_STALE_MS = 15_000

export interface RedisLimiterOptions {
  keyPrefix: string
  probeIntervalMs?: number
  /** Picks the quota period (default Date.now); windows are timed by Redis itself. */
  now?: () => number
}

export function createRedisLimiter (redis: Redis, logger: Logger, opts: RedisLimiterOptions): RateLimiter {
  const clock = opts.now ?? Date.now
  const local = createMemoryLimiter(clock)
  const outage = createOutageLog(logger, 'rate-limits')
  const probeIntervalMs = opts.probeIntervalMs ?? 1000
  // The hits' own connection, to the server ioredis was given; it closes with the ioredis client.
  const pipe = new RedisPipe(redis.options as PipeTarget, { deadlineMs: LIMIT_WAIT_MS, retryMs: probeIntervalMs })
  let ended = false
  redis.once('end', () => { ended = true; pipe.close() })
  /** Last count Redis reported per quota key, the base for local counting in an outage. */
  const known = new Map<string, number>()
  /** Quota hits admitted locally during an outage, not yet in Redis. */
  const pending = new Map<string, { cost: number, expireAt: number }>()
  let down = false
  let lastProbe = 0
  let probing: Promise<void> | undefined
  /** Instances sharing the limits, as Redis last counted them. */
  let instances = 1
  const member = randomUUID()
  const heartbeat = () => {
    if (down) return
    const now = Date.now()
    runScript(redis, MEMBER, [`${opts.keyPrefix}limiter:members`], [member, now, now - MEMBER_STALE_MS])
      .then(n => { instances = Math.max(1, Number(n)) }, () => {})
  }
  heartbeat()
  setInterval(heartbeat, MEMBER_HEARTBEAT_MS).unref()
  /** This instance's share of a limit while Redis is down. */
  const share = (limit: number) => limit <= 0 ? 0 : Math.max(1, Math.floor(limit / instances))

  const remember = (key: string, count: number) => {
    known.delete(key)
    known.set(key, count)
    if (known.size > MAX_KNOWN) known.delete(known.keys().next().value as string)
  }
  const fail = (err: unknown) => {
    down = true
    lastProbe = Date.now()
    outage.fail(err, 'Rate limits cannot reach Redis; counting per instance until it returns')
  }
  const flushPending = async () => {
    for (const [key, p] of pending) {
      const ttl = p.expireAt - Date.now()
      const sent = p.cost
      if (ttl > 0) await runScript(redis, ADD, [key], [sent, ttl])
      // Hits admitted while this ran stay pending for the next pass.
      p.cost -= sent
      if (p.cost <= 0) pending.delete(key)
    }
  }
  const probe = () => {
    if (probing !== undefined) return
    lastProbe = Date.now()
    probing = Promise.all([pipe.ping(), redis.ping()]).then(flushPending).then(() => {
      down = false
      outage.ok('Rate limits reach Redis again; pending quota counts were added')
    }, () => {
      // Not back yet (the connection may be ready before Redis answers scripts): try again shortly,
      // with or without traffic, so pending quota hits reach Redis soon after it returns.
      if (down && !ended) setTimeout(probe, probeIntervalMs).unref()
    }).finally(() => { probing = undefined })
  }
  redis.on('ready', () => { if (down) probe() })

  const viaRedis = async (key: string, limit: number, cost: number, ttlMs: number): Promise<{ allowed: boolean, count: number, ttl: number } | undefined> => {
    if (down) {
      if (Date.now() - lastProbe >= probeIntervalMs) probe()
      return undefined
    }
    try {
      const [admitted, count, ttl] = await pipe.evalsha(HIT, [key], [cost, limit, ttlMs]) as [number, number, number]
      return { allowed: admitted === 1, count, ttl: ttl < 0 ? ttlMs : ttl }
    } catch (err) {
      fail(err)
      return undefined
    }
  }

  const rateResult = (limit: number, r: { allowed: boolean, count: number, ttl: number }): HitResult =>
    ({ allowed: r.allowed, remaining: Math.max(0, limit - r.count), resetSeconds: Math.ceil(r.ttl / 1000) })
  const quotaResult = (rkey: string, limit: number, endMs: number, now: number, r: { allowed: boolean, count: number }): HitResult => {
    remember(rkey, r.count)
    return { allowed: r.allowed, remaining: Math.max(0, limit - r.count), resetSeconds: secondsUntil(endMs, now) }
  }

  const limiter: RateLimiter = {
    async hit (key, limit, windowSeconds, cost = 1) {
      const r = await viaRedis(`${opts.keyPrefix}rate:${key}`, limit, cost, windowSeconds * 1000)
      if (r === undefined) return await local.hit(key, share(limit), windowSeconds, cost)
      return rateResult(limit, r)
    },
    async hitPolicy (rate, quota) {
      const now = clock()
      const { stamp, endMs } = quotaPeriod(quota.period, now)
      const rkey = `${opts.keyPrefix}quota:${quota.key}:${stamp}`
      if (!down) {
        try {
          const [a1, c1, t1, a2, c2] = await pipe.evalsha(HIT_POLICY, [`${opts.keyPrefix}rate:${rate.key}`, rkey],
            [1, rate.limit, rate.windowSeconds * 1000, quota.limit, endMs - now + QUOTA_GRACE_MS]) as [number, number, number, number, number] // HIT_POLICY's five numbers
          const r = rateResult(rate.limit, { allowed: a1 === 1, count: c1, ttl: t1 < 0 ? rate.windowSeconds * 1000 : t1 })
          return [r, a2 === -1 ? null : quotaResult(rkey, quota.limit, endMs, now, { allowed: a2 === 1, count: c2 })]
        } catch (err) { fail(err) }
      }
      // Redis down: the two counters in turn, answered locally as hit() and hitQuota() are.
      const r = await limiter.hit(rate.key, rate.limit, rate.windowSeconds)
      return [r, r.allowed ? await limiter.hitQuota(quota.key, quota.limit, quota.period) : null]
    },
    async hitQuota (key, limit, period, cost = 1) {
      const now = clock()
      const { stamp, endMs } = quotaPeriod(period, now)
      const rkey = `${opts.keyPrefix}quota:${key}:${stamp}`
      const r = await viaRedis(rkey, limit, cost, endMs - now + QUOTA_GRACE_MS)
      if (r !== undefined) return quotaResult(rkey, limit, endMs, now, r)
      const p = pending.get(rkey) ?? { cost: 0, expireAt: endMs + QUOTA_GRACE_MS }
      // This instance's share of what was left when Redis was last seen.
      const allowance = share(Math.max(0, limit - (known.get(rkey) ?? 0)))
      const result: HitResult = { allowed: p.cost + cost <= allowance, remaining: 0, resetSeconds: secondsUntil(endMs, now) }
      if (result.allowed) {
        p.cost += cost
        pending.set(rkey, p)
      }
      result.remaining = Math.max(0, allowance - p.cost)
      return result
    }
  }
  return limiter
}
