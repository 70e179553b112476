/** The gateway's HTTP layer, as GATEWAY_SERVER chooses (types.ts: the boundary both implement). */
import type { Logger } from '../../logger.js'
import { createNodeLayer, type TlsOptions } from './node.js'
import type { HttpLayer, Route } from './types.js'
import { createUwsLayer } from './uws.js'

export type GatewayLayer = HttpLayer & { listenTls?: (t: TlsOptions) => Promise<number> }

export function createHttpLayer (server: 'uws' | 'node', routes: readonly Route[], o: { logger: Logger, hopSecret: string }): GatewayLayer {
  return server === 'node' ? createNodeLayer(routes, o) : createUwsLayer(routes)
}
