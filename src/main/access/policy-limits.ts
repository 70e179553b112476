/**
 * A profile's policy at the gateway: a rate limit per window and a quota per day
 * or month, counted per profile (across instances when the limiter is Redis).
 * Answers carry RateLimit-Limit / -Remaining / -Reset for the tighter of the two;
 * a spent limit is 429 with Retry-After. A disabled policy limits nothing.
 */
import { tooManyRequests, type AppError } from '../../common/errors.js'
import type { HitResult, RateLimiter } from '../cache/types.js'

export interface PolicySnapshot {
  id: string
  status: 'enabled' | 'disabled'
  rate_limit: { requests: number, per_seconds: number } | null
  quota: { requests: number, period: 'day' | 'month' } | null
}

export interface PolicyOutcome { headers: Array<[string, string]>, error: AppError | null }

const NONE: PolicyOutcome = { headers: [], error: null }

/**
 * Counts one request against the profile's policy. Synchronous when the limiter
 * can answer at once (memory), so the gateway decides within the request's callback.
 */
export function applyPolicy (limiter: RateLimiter, policy: PolicySnapshot | undefined, profileId: string): PolicyOutcome | Promise<PolicyOutcome> {
  if (policy === undefined || policy.status !== 'enabled' || (policy.rate_limit === null && policy.quota === null)) return NONE
  const rl = policy.rate_limit
  const q = policy.quota
  const rlKey = `rl:${policy.id}:${profileId}`
  const qKey = `q:${policy.id}:${profileId}`
  const sync = limiter.sync
  if (sync !== undefined) {
    const r = rl === null ? null : sync.hit(rlKey, rl.requests, rl.per_seconds)
    return decide(policy, r, r === null || r.allowed ? (q === null ? null : sync.hitQuota(qKey, q.requests, q.period)) : null)
  }
  if (rl !== null && q !== null && limiter.hitPolicy !== undefined) {
    return limiter.hitPolicy({ key: rlKey, limit: rl.requests, windowSeconds: rl.per_seconds }, { key: qKey, limit: q.requests, period: q.period })
      .then(([r, qr]) => decide(policy, r, qr))
  }
  return (async () => {
    const r = rl === null ? null : await limiter.hit(rlKey, rl.requests, rl.per_seconds)
    // A refused rate limit does not spend quota.
    return decide(policy, r, r === null || r.allowed ? (q === null ? null : await limiter.hitQuota(qKey, q.requests, q.period)) : null)
  })()
}

/** The answer for the two counters' results (null: not counted): a refusal, or the tighter counter's headers. */
function decide (policy: PolicySnapshot, rate: HitResult | null, quota: HitResult | null): PolicyOutcome {
  if (rate !== null && !rate.allowed) return outcome({ limit: policy.rate_limit!.requests, r: rate }, 'The rate limit of your plan is reached; retry after the reset.')
  if (quota !== null && !quota.allowed) {
    return outcome({ limit: policy.quota!.requests, r: quota }, `The ${policy.quota!.period === 'day' ? 'daily' : 'monthly'} quota of your plan is spent.`)
  }
  let tightest: { limit: number, r: HitResult } | null = rate === null ? null : { limit: policy.rate_limit!.requests, r: rate }
  if (quota !== null && (tightest === null || quota.remaining < tightest.r.remaining)) tightest = { limit: policy.quota!.requests, r: quota }
  return tightest === null ? NONE : outcome(tightest, '')
}

function outcome (t: { limit: number, r: HitResult }, message: string): PolicyOutcome {
  const headers: Array<[string, string]> = [
    ['ratelimit-limit', String(t.limit)],
    ['ratelimit-remaining', String(Math.max(0, t.r.remaining))],
    ['ratelimit-reset', String(Math.max(0, Math.ceil(t.r.resetSeconds)))]
  ]
  return { headers, error: t.r.allowed ? null : tooManyRequests(t.r.resetSeconds, message) }
}
