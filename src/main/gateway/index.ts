/**
 * The gateway: published APIs on one listener. The request path is
 * split into stages, one file each (read them in this order):
 *   http/               the HTTP layer under the stages (types.ts: the boundary; uws, node)
 *   listener.ts         the routes, health routes, the stage chain, listen/close
 *   exchange.ts         the per-request object: head copied from req, response head, finish
 *   access.ts           client authentication and policy (auth_required collections)
 *   body.ts             buffered or streamed request bodies, after the access decision
 *   forward.ts          the backend exchange and the relay of its answer
 *   workflow-target.ts  a proxy's enabled workflow answering instead of a backend
 * with route-table.ts (matching), request-head.ts and upstream.ts (the backend client).
 * See docs/gateway.md.
 */
import type { Collection, Proxy } from '../../common/types.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { CompiledRoute } from './route-table.js'
import type { RoutingDelta } from '../routes/reloader.js'
import type { GatewayAccess } from '../access/gate.js'
import type { RequestRecord } from '../store/request-record.js'
import type { WebHandler } from './mcp-route.js'
import type { RouteRegistrar } from './http/types.js'
import type { Tracer } from '../observability/tracing/tracer.js'
import type { Lookup, TargetHealth } from './upstreams/upstream-set.js'
import type { HealthShare } from './upstreams/health.js'
import type { UpstreamRegistry } from './upstreams/registry.js'
import type { TraceContext } from '../../common/trace-context.js'

import type { ResponseCache } from './responses/response-cache.js'

export { createGateway } from './listener.js'

export interface ReadyReport { ok: boolean, checks: Record<string, string> }

export interface GatewayOptions {
  /** Where cached answers are kept (default: this process's memory, RESPONSE_CACHE_MAX_BYTES). */
  responseCache?: ResponseCache
  config: Readonly<Config>
  logger: Logger
  readiness: () => Promise<ReadyReport>
  /** Snapshot of the environment for header references (default: process.env at creation). */
  env?: Readonly<Record<string, string | undefined>>
  /** Clients, profiles and policies for collections with auth_required (absent: such calls get 401). */
  access?: GatewayAccess
  /** Spans per request and their export (null or absent: tracing off, nothing built per request). */
  tracer?: Tracer | null
  /** Called once per finished request (request log, metrics); must not block. */
  observe?: (r: RequestRecord) => void
  /** Runs a proxy's enabled workflow for a request; resolves to the answer or rejects with an AppError. */
  workflows?: (route: CompiledRoute, trigger: WorkflowTrigger, trace: TraceContext | null) => Promise<{ status: number, headers: Record<string, string>, body: unknown }>
  /** Fixed routes that are not gateway traffic (the gateway MCP at `/mcp`, the portal assistant), answering web Requests. */
  webRoutes?: Array<{ path: string, handler: WebHandler }>
  /** How upstream target host names are looked up (default: the system resolver); tests give their own answers. */
  lookup?: Lookup
  /** Registers fixed-prefix routes (the developer portal's /portal/*), matched before the catch-all. */
  mount?: (app: RouteRegistrar) => void
  /**
   * Gateway threads (uws, GATEWAY_THREADS > 1): `first` checks the port free with an exclusive
   * bind, then listens on it with SO_REUSEPORT; `join` (a gateway thread) listens beside it and
   * starts no TLS listener. Absent: the listener is exclusive, as with one thread.
   */
  portSharing?: 'first' | 'join'
  /** The secret of TLS-relayed requests (gateway threads take the main thread's). */
  hopSecret?: string
  /** Gateway threads: this thread's part in the process's one upstream health view (upstreams/health.ts). */
  upstreamShare?: HealthShare
}

/** What an http_trigger exposes to the workflow. */
export interface WorkflowTrigger {
  request: { method: string, path: string, path_params: Record<string, string>, query: Record<string, string | string[]>, headers: Record<string, string>, body: unknown }
}

export type { GatewayAccess, TargetHealth }

export interface Gateway {
  /** Serves exactly these collections and proxies (compiling only what differs from the current table). */
  setRoutes (collections: readonly Collection[], proxies: readonly Proxy[]): void
  /** Applies what changed: O(changed routes). */
  updateRoutes (delta: RoutingDelta): void
  /** This instance's view of a balanced collection's targets; null when it forwards to one address directly. */
  upstreamHealth (collectionId: string): TargetHealth[] | null
  /** `gatehouse_upstream_target_healthy` lines for /metrics. */
  upstreamMetrics (): string
  /** The balanced collections' sets (gateway threads share their health through it). */
  readonly upstreams: UpstreamRegistry
  /** Starts the listener, and the TLS listener too when TLS_CERT and TLS_KEY are set. */
  listen (): Promise<{ port: number, tlsPort: number | null }>
  close (): Promise<void>
  /** Closes the listener and every connection at once, synchronously (a crashing gateway thread). */
  abort (): void
  /** The secret TLS-relayed requests carry (gateway threads verify the same one). */
  readonly hopSecret: string
  readonly inFlight: number
  /** Requests shed since start, by signal. */
  readonly shed: { in_flight: number, event_loop_delay: number }
  /** The response cache of proxies with `cache` (purges, /metrics). */
  readonly responseCache: ResponseCache
}
