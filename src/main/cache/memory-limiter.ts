import { quotaPeriod, secondsUntil } from './quota-period.js'
import type { HitResult, RateLimiter } from './types.js'

interface Counter { count: number, resetAt: number }

/**
 * One-instance counters with the same semantics as the Redis variant: a
 * window starts at a key's first hit, rejected hits do not count. Expired
 * counters are swept every 4096 hits so memory stays bounded without a timer.
 * `now` is the clock (tests move it across a quota period's end).
 */
export function createMemoryLimiter (now: () => number = Date.now): RateLimiter {
  const counters = new Map<string, Counter>()
  let hits = 0
  const count = (key: string, limit: number, cost: number, resetAt: () => number): HitResult => {
    const at = now()
    if (++hits % 4096 === 0) for (const [k, c] of counters) if (c.resetAt <= at) counters.delete(k)
    let c = counters.get(key)
    if (c === undefined || c.resetAt <= at) {
      c = { count: 0, resetAt: resetAt() }
      counters.set(key, c)
    }
    const allowed = c.count + cost <= limit
    if (allowed) c.count += cost
    return { allowed, remaining: Math.max(0, limit - c.count), resetSeconds: secondsUntil(c.resetAt, at) }
  }
  return {
    async hit (key, limit, windowSeconds, cost = 1) {
      return count(`w:${key}`, limit, cost, () => now() + windowSeconds * 1000)
    },
    async hitQuota (key, limit, period, cost = 1) {
      const { stamp, endMs } = quotaPeriod(period, now())
      return count(`q:${key}:${stamp}`, limit, cost, () => endMs)
    }
  }
}
