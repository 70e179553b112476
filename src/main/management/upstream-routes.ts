/**
 * GET /api/v1/collections/:id/upstream/health (viewer): this instance's view of the collection's
 * targets. Health is judged by each instance on its own traffic and probes, so two instances may
 * answer differently for a while.
 */
import type { TargetHealth } from '../gateway/index.js'
import { upstreamHealthOp } from '../operations/collections.js'
import type { Store } from '../store/types.js'
import { mountOperations, op } from './operation-routes.js'
import type { Router } from './router.js'

export function registerUpstreamRoutes (router: Router, deps: { store: Store, health: (collectionId: string) => TargetHealth[] | null }): void {
  mountOperations(router, deps, [
    op({ method: 'GET', path: '/api/v1/collections/:id/upstream/health', input: r => ({ id: r.params.id }), operation: upstreamHealthOp })
  ])
}
