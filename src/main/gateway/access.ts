/**
 * Access stage: client authentication and the profile's policy, for collections
 * with auth_required. Decided inside the uWS callback when the gate can answer
 * at once; otherwise the pending decision is left on the exchange (`gate`) and
 * the body stage waits on it before anything is forwarded.
 */
import { AppError, serviceUnavailable } from '../../common/errors.js'
import type { AccessDecision } from '../access/gate.js'
import type { GatewayExchange } from './exchange.js'
import { endAccessSpan, startAccessSpan } from './spans.js'

/** Returns false when the request was refused (the answer is already written). */
export function checkAccess (x: GatewayExchange): boolean {
  const route = x.match!.route
  if (!route.collection.auth_required) return true
  let decision: AccessDecision | Promise<AccessDecision>
  try {
    decision = x.ctx.checkAccess({
      collectionId: route.collection.id, method: x.method, authorization: x.authorization, clientId: x.clientId,
      profileId: x.profileId, remoteIp: x.remoteIp, certFingerprint: x.certFingerprint
    })
  } catch (err) { x.fail(broken(x, err)); return false }
  if (decision instanceof Promise) {
    // Only a decision that waits (Redis counters, a remote key set) gets a span of its own.
    const span = x.span === null ? null : startAccessSpan(x)
    x.gate = decision.then(d => taken(x, d), err => broken(x, err))
    if (span !== null) x.gate.then(err => endAccessSpan(x, span, err))
    return true
  }
  const refused = taken(x, decision)
  if (refused !== null) { x.fail(refused); return false }
  return true
}

function taken (x: GatewayExchange, d: AccessDecision): AppError | null {
  x.limitHeaders = d.headers
  if (d.principal !== undefined) x.principal = d.principal
  return d.error
}

function broken (x: GatewayExchange, err: unknown): AppError {
  x.ctx.logger.error({ err, request_id: x.rid }, 'gateway access check failed')
  return serviceUnavailable('Access could not be checked; retry shortly.', 1)
}
