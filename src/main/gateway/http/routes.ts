/** The gateway listener's fixed routes, recorded in order and handed to the HTTP layer when it starts. */
import type { HttpHandler, Route, RouteRegistrar, UpgradeHandler } from './types.js'

export function createRouteList (): RouteRegistrar & { readonly routes: readonly Route[] } {
  const routes: Route[] = []
  return {
    routes,
    get (pattern: string, handler: HttpHandler) { routes.push({ method: 'get', pattern, handler }) },
    any (pattern: string, handler: HttpHandler) { routes.push({ method: 'any', pattern, handler }) },
    upgrade (pattern: string, handler: UpgradeHandler) { routes.push({ method: 'upgrade', pattern, handler }) }
  }
}
