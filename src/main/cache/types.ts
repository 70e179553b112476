/**
 * Shared-state primitives. Each has a memory variant (one instance) and a Redis
 * variant (every instance sharing one Redis), checked by one contract suite.
 */

/** JSON values under string keys, with an optional time to live. */
export interface KeyValueCache {
  /** The stored value, or `undefined` when missing or expired. */
  get (key: string): Promise<unknown>
  /** Stores a JSON-serialisable value; without `ttlMs` it stays until deleted or evicted. */
  set (key: string, value: unknown, ttlMs?: number): Promise<void>
  /** True when a value was there. */
  delete (key: string): Promise<boolean>
}

/** Named leases held by an owner until released or expired. */
export interface LockManager {
  /** Takes the lock, or extends it when `owner` already holds it. False when another owner holds it. */
  acquire (name: string, ttlMs: number, owner: string): Promise<boolean>
  /** Extends the lease; false when `owner` no longer holds it. */
  renew (name: string, ttlMs: number, owner: string): Promise<boolean>
  /** Frees the lock; false when `owner` did not hold it. */
  release (name: string, owner: string): Promise<boolean>
  /** True for the first caller per key within `ttlMs` (one cron run per schedule slot). */
  claimOnce (key: string, ttlMs: number): Promise<boolean>
}

export interface HitResult {
  allowed: boolean
  /** What is left in the window or period after this hit. */
  remaining: number
  /** Seconds until the window or period starts afresh. */
  resetSeconds: number
}

/** UTC calendar periods. */
export type QuotaPeriod = 'day' | 'month'

/** Counters that admit at most `limit` per window or period; rejected hits do not count. */
export interface RateLimiter {
  /** Fixed window starting at the key's first admitted hit. */
  hit (key: string, limit: number, windowSeconds: number, cost?: number): Promise<HitResult>
  /** Quota per UTC calendar day or month. */
  hitQuota (key: string, limit: number, period: QuotaPeriod, cost?: number): Promise<HitResult>
  /**
   * A rate-limit hit and, when it is admitted, a quota hit, in one step (Redis: one round trip
   * instead of two); the same results as hit() then hitQuota(), and a refused rate limit spends
   * no quota (its quota result is null). Optional: without it the two are called in turn.
   */
  hitPolicy?(rate: { key: string, limit: number, windowSeconds: number }, quota: { key: string, limit: number, period: QuotaPeriod }): Promise<[HitResult, HitResult | null]>
  /**
   * The same counters answered synchronously, when the limiter needs no I/O (memory):
   * the gateway then decides within the request's own callback, without a promise hop.
   */
  readonly sync?: {
    hit (key: string, limit: number, windowSeconds: number, cost?: number): HitResult
    hitQuota (key: string, limit: number, period: QuotaPeriod, cost?: number): HitResult
  }
}
