/** The gateway's HTTP layer, as configured (see types.ts for the boundary both implement). */
import type { HttpLayer, Route } from './types.js'
import { createUwsLayer } from './uws.js'

export function createHttpLayer (routes: readonly Route[]): HttpLayer {
  return createUwsLayer(routes)
}
