/**
 * DELETE /api/v1/proxies/:id/cache: drops a proxy's cached answers on every instance. With
 * CACHE_TYPE=redis the entries live in Redis and are deleted there (every instance reads them);
 * a broadcast also tells each instance to drop what it keeps in memory.
 */
import { getProxy } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { Router } from './router.js'

export function registerCacheRoutes (router: Router, deps: { store: Store, purge: (proxyId: string) => Promise<void> }): void {
  router.add('DELETE', '/api/v1/proxies/:id/cache', async ctx => {
    const p = await getProxy(deps.store, ctx.params.id)
    await deps.purge(p.id)
    return { status: 204 }
  }, { role: 'editor' })
}
