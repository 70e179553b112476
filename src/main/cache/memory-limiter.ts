import { periodCache, secondsUntil } from './quota-period.js'
import type { HitResult, QuotaPeriod, RateLimiter } from './types.js'

interface Counter { count: number, resetAt: number }

/** The quota counters of a memory limiter, for keeping them across restarts (access/quota-persistence.ts). */
export interface QuotaCounters {
  /** Raises a quota counter of a period to at least `count` (counts read at start). */
  seed (key: string, stamp: string, endMs: number, count: number): void
  /** Told of every admitted quota hit. */
  listen (fn: (key: string, stamp: string, endMs: number, cost: number) => void): void
}

/**
 * One-instance counters with the same semantics as the Redis variant: a
 * window starts at a key's first hit, rejected hits do not count. Expired
 * counters are swept every 4096 hits so memory stays bounded without a timer.
 * `now` is the clock (tests move it across a quota period's end).
 */
export function createMemoryLimiter (now: () => number = Date.now): RateLimiter & { quotas: QuotaCounters } {
  const counters = new Map<string, Counter>()
  let hits = 0
  const count = (key: string, limit: number, cost: number, resetAt: (at: number) => number): HitResult => {
    const at = now()
    if (++hits % 4096 === 0) for (const [k, c] of counters) if (c.resetAt <= at) counters.delete(k)
    let c = counters.get(key)
    if (c === undefined || c.resetAt <= at) {
      c = { count: 0, resetAt: resetAt(at) }
      counters.set(key, c)
    }
    const allowed = c.count + cost <= limit
    if (allowed) c.count += cost
    return { allowed, remaining: Math.max(0, limit - c.count), resetSeconds: secondsUntil(c.resetAt, at) }
  }
  const { sync, hit, hitQuota, listeners } = limiterOver(count, now)
  return {
    quotas: {
      seed (key, stamp, endMs, n) {
        if (endMs <= now()) return
        const c = counters.get(`q:${key}:${stamp}`)
        if (c === undefined || c.resetAt <= now()) counters.set(`q:${key}:${stamp}`, { count: n, resetAt: endMs })
        else c.count = Math.max(c.count, n)
      },
      listen (fn) { listeners.fn = fn }
    },
    sync,
    hit,
    hitQuota
  }
}

type QuotaListener = Parameters<QuotaCounters['listen']>[0]

/**
 * The limiter's calls over a counting function (`count(key, limit, cost, resetAt)`): windows as
 * `w:<key>`, quotas as `q:<key>:<period stamp>`, admitted quota hits told to `listeners.fn`.
 * Shared by the memory limiter and its shared-memory variant.
 */
export function limiterOver (count: (key: string, limit: number, cost: number, resetAt: (at: number) => number) => HitResult, now: () => number): Pick<RateLimiter, 'hit' | 'hitQuota'> & { sync: NonNullable<RateLimiter['sync']>, listeners: { fn: QuotaListener | null } } {
  // The current period per kind, recomputed only when it ends (no Date work per hit).
  const periodAt = periodCache()
  const listeners: { fn: QuotaListener | null } = { fn: null }
  const sync = {
    hit (key: string, limit: number, windowSeconds: number, cost = 1): HitResult {
      // The window is timed from the same reading of the clock as the hit: a second reading a
      // millisecond later made a 60 s window report 61 s until its reset.
      return count(`w:${key}`, limit, cost, at => at + windowSeconds * 1000)
    },
    hitQuota (key: string, limit: number, period: QuotaPeriod, cost = 1): HitResult {
      const { stamp, endMs } = periodAt(period, now())
      const r = count(`q:${key}:${stamp}`, limit, cost, () => endMs)
      if (r.allowed && listeners.fn !== null) listeners.fn(key, stamp, endMs, cost)
      return r
    }
  }
  return {
    sync,
    listeners,
    async hit (key, limit, windowSeconds, cost = 1) { return sync.hit(key, limit, windowSeconds, cost) },
    async hitQuota (key, limit, period, cost = 1) { return sync.hitQuota(key, limit, period, cost) }
  }
}
