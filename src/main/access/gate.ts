/**
 * The gateway's access decision for a collection with auth_required: who is
 * calling (profile authentication), then their policy (rate limit and quota).
 * Answers synchronously whenever it can (known credentials, memory limiter), so
 * the usual authenticated request is decided inside its own uWS callback and
 * costs no promise hops; a first-seen token or a Redis limiter returns a promise.
 */
import { AppError, unauthorized } from '../../common/errors.js'
import type { RateLimiter } from '../cache/types.js'
import { applyPolicy, type PolicyOutcome, type PolicySnapshot } from './policy-limits.js'
import { createProfileAuthenticator, type CallIdentity, type Principal, type ProfileSnapshot } from './profile-auth.js'

export interface GatewayAccess {
  profiles (): ReadonlyMap<string, ProfileSnapshot>
  policies (): ReadonlyMap<string, PolicySnapshot>
  limiter: RateLimiter
}

export interface AccessDecision { headers: Array<[string, string]>, error: AppError | null, principal?: Principal }

export type AccessGate = (call: CallIdentity) => AccessDecision | Promise<AccessDecision>

export function createAccessGate (access: GatewayAccess | undefined): AccessGate {
  if (access === undefined) {
    const refused: AccessDecision = { headers: [], error: unauthorized('This API requires client credentials.') }
    return () => refused
  }
  const authenticator = createProfileAuthenticator()
  const withPolicy = (who: Principal | AppError): AccessDecision | Promise<AccessDecision> => {
    if (who instanceof AppError) return { headers: [], error: who }
    if (who.policy_id === null) return { headers: [], error: null, principal: who }
    const out = applyPolicy(access.limiter, access.policies().get(who.policy_id), who.profile_id)
    const decided = (o: PolicyOutcome): AccessDecision => ({ headers: o.headers, error: o.error, principal: who })
    return out instanceof Promise ? out.then(decided) : decided(out)
  }
  return call => {
    const who = authenticator.authenticate(access.profiles(), call)
    return who instanceof Promise ? who.then(withPolicy) : withPolicy(who)
  }
}
