/**
 * GET /api/v1/collections/:id/upstream/health (viewer): this instance's view of the collection's
 * targets. Health is judged by each instance on its own traffic and probes, so two instances may
 * answer differently for a while. A collection forwarded straight to one IP address (no set of
 * targets to choose from) reads healthy: nothing holds it out.
 */
import type { TargetHealth } from '../gateway/index.js'
import { getCollection } from '../store/collections.js'
import type { Store } from '../store/types.js'
import type { Router } from './router.js'

export function registerUpstreamRoutes (router: Router, deps: { store: Store, health: (collectionId: string) => TargetHealth[] | null }): void {
  router.add('GET', '/api/v1/collections/:id/upstream/health', async ctx => {
    const c = await getCollection(deps.store, ctx.params.id)
    const seen = deps.health(c.id)
    const targets = seen ?? c.upstream.targets.map(t => ({ url: t.url, weight: t.weight, state: 'healthy' as const, since: c.updated_at, last_error: null, addresses: [] }))
    return { status: 200, body: { collection_id: c.id, targets } }
  })
}
