/**
 * DELETE /api/v1/proxies/:id/cache: drops a proxy's cached answers on every instance. With
 * CACHE_TYPE=redis the entries live in Redis and are deleted there (every instance reads them);
 * a broadcast also tells each instance to drop what it keeps in memory.
 */
import { purgeProxyCacheOp } from '../operations/proxies.js'
import type { Store } from '../store/types.js'
import { mountOperations, op } from './operation-routes.js'
import type { Router } from './router.js'

interface CacheDeps { store: Store, purge: (proxyId: string) => Promise<void> }

export function registerCacheRoutes (router: Router, deps: CacheDeps): void {
  mountOperations(router, deps, [
    op({ method: 'DELETE', path: '/api/v1/proxies/:id/cache', role: 'editor', status: 204, input: r => ({ id: r.params.id }), operation: purgeProxyCacheOp })
  ])
}
