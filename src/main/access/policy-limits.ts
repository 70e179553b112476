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

export async function applyPolicy (limiter: RateLimiter, policy: PolicySnapshot | undefined, profileId: string): Promise<PolicyOutcome> {
  if (policy === undefined || policy.status !== 'enabled' || (policy.rate_limit === null && policy.quota === null)) return NONE
  let tightest: { limit: number, r: HitResult } | null = null
  const consider = (limit: number, r: HitResult) => {
    if (tightest === null || r.remaining < tightest.r.remaining || (!r.allowed && tightest.r.allowed)) tightest = { limit, r }
  }
  if (policy.rate_limit !== null) {
    const r = await limiter.hit(`rl:${policy.id}:${profileId}`, policy.rate_limit.requests, policy.rate_limit.per_seconds)
    consider(policy.rate_limit.requests, r)
    if (!r.allowed) return outcome(tightest!, 'The rate limit of your plan is reached; retry after the reset.')
  }
  if (policy.quota !== null) {
    const r = await limiter.hitQuota(`q:${policy.id}:${profileId}`, policy.quota.requests, policy.quota.period)
    consider(policy.quota.requests, r)
    if (!r.allowed) return outcome({ limit: policy.quota.requests, r }, `The ${policy.quota.period === 'day' ? 'daily' : 'monthly'} quota of your plan is spent.`)
  }
  return outcome(tightest!, '')
}

function outcome (t: { limit: number, r: HitResult }, message: string): PolicyOutcome {
  const headers: Array<[string, string]> = [
    ['ratelimit-limit', String(t.limit)],
    ['ratelimit-remaining', String(Math.max(0, t.r.remaining))],
    ['ratelimit-reset', String(Math.max(0, Math.ceil(t.r.resetSeconds)))]
  ]
  return { headers, error: t.r.allowed ? null : tooManyRequests(t.r.resetSeconds, message) }
}
