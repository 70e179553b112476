/**
 * Trigger health (viewer), a table over src/main/operations/triggers.ts:
 *   GET /api/v1/triggers              { items: [...], next_cursor: null }
 *   GET /api/v1/triggers/:proxyId     one trigger
 */
import { getTriggerOp, listTriggersOp, type TriggerDeps } from '../operations/triggers.js'
import { mountOperations, op, type OperationRoute } from './operation-routes.js'
import type { Router } from './router.js'

export const triggerRoutes: ReadonlyArray<OperationRoute<TriggerDeps>> = [
  op({ method: 'GET', path: '/api/v1/triggers', role: 'viewer', input: () => ({}), operation: listTriggersOp }),
  op({ method: 'GET', path: '/api/v1/triggers/:proxyId', role: 'viewer', input: r => ({ proxyId: r.params.proxyId }), operation: getTriggerOp })
]

export function registerTriggerRoutes (router: Router, deps: TriggerDeps): void {
  mountOperations(router, deps, triggerRoutes)
}
