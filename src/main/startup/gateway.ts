/**
 * The gateway subsystem: the gateway listener with its response cache, the developer portal,
 * the agents' MCP at /mcp and the portal assistant. Its consumers keep the route table, the
 * portal and the MCP's tools in step with the served configuration.
 */
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { AccessSnapshot } from '../access/snapshot.js'
import { createGateway, type Gateway, type GatewayOptions } from '../gateway/index.js'
import { createThreadedGateway, type GatewayThreads } from '../gateway/threads/pool.js'
import type { SharedMemoryLimiter } from '../cache/shared-memory-limiter.js'
import { gatewayThreadCount } from '../config/config.js'
import { MCP_PATH } from '../gateway/mcp-route.js'
import { ResponseCache } from '../gateway/responses/response-cache.js'
import { createMemoryStore, createRedisStore } from '../gateway/responses/cache-store.js'
import { createGatewayMcp } from '../mcp/gateway-mcp.js'
import { createMcpSessions } from '../mcp/sessions.js'
import { createPortal } from '../static/portal.js'
import { builtUiDir, loadStaticFiles } from '../static/static-files.js'
import { createPortalAssistant, PORTAL_ASSISTANT_PATH } from '../assistant/routes.js'
import type { AuditTrail } from '../management/audit-trail.js'
import type { ConfigConsumer, ConfigReload } from './config-reload.js'
import type { ObservabilitySubsystem } from './observability.js'
import type { StoreSubsystem } from './store.js'
import type { Subsystem } from './subsystem.js'
import type { WorkflowsSubsystem } from './workflows.js'

/** Broadcast channel of response-cache purges (each instance drops the proxy's entries in its memory). */
const CACHE_PURGE_CHANNEL = 'response-cache-purge'

export interface GatewaySubsystem extends Subsystem {
  gateway: Gateway
  /** The gateway's worker threads (GATEWAY_THREADS > 1 with uws), else null. */
  threads: GatewayThreads | null
  /** Drops a proxy's cached answers here and, through the hub, on every instance. */
  purgeCache (proxyId: string): Promise<void>
  /** The route table (each proxy overlaid by its trigger test-listen, if any). */
  routes: ConfigConsumer
  portal: ConfigConsumer
  mcp: ConfigConsumer
  listen (): Promise<{ port: number, tlsPort: number | null }>
  announce (ports: { port: number, tlsPort: number | null }): void
}

export interface GatewayStartOptions {
  config: Readonly<Config>
  logger: Logger
  store: StoreSubsystem
  observability: ObservabilitySubsystem
  workflows: WorkflowsSubsystem
  /** Profiles and policies as of the last configuration reload. */
  access: () => AccessSnapshot
  /** Where gateway threads hear of access snapshots and hold a write's answer until they serve it. */
  reload?: Pick<ConfigReload, 'onAccess' | 'addSettleHook'>
  /** The management listener's audit trail (the portal assistant records its tool calls there); read per request. */
  audit: () => AuditTrail
  keyPrefix: string | undefined
}

export function startGateway (o: GatewayStartOptions): GatewaySubsystem {
  const { config, logger, observability: { metrics, tracer, observe }, workflows } = o
  const { store, shared, hub } = o.store
  const env = Object.freeze({ ...process.env })
  const portal = createPortal(loadStaticFiles(builtUiDir('portal'), { spa: false }))
  const access = { profiles: () => o.access().profiles, policies: () => o.access().policies, limiter: shared.limiter }
  // Agents' MCP on the gateway listener; its sessions live in the shared cache like the management MCP's.
  const gatewayMcp = createGatewayMcp({
    access,
    sessions: createMcpSessions(shared.kv, { prefix: 'gmcp', idleMs: config.MCP_SESSION_IDLE_SECONDS * 1000, perUser: config.MCP_SESSIONS_PER_USER, max: config.MCP_SESSIONS_MAX }),
    logger,
    executeTimeoutMs: config.UPSTREAM_TIMEOUT_MS + 5_000,
    config
  })
  // With CACHE_TYPE=redis cached answers live in Redis: every instance serves what one fetched.
  const responseCache = new ResponseCache(
    shared.redis !== undefined ? createRedisStore(shared.redis, o.keyPrefix ?? 'gatehouse:', logger) : createMemoryStore(config.RESPONSE_CACHE_MAX_BYTES),
    config.RESPONSE_CACHE_MAX_ENTRY_BYTES)
  metrics.addSource(() => responseCache.prometheus())
  const options: GatewayOptions = {
    config, logger, readiness: o.store.readiness, env, observe, workflows: workflows.gateway, mount: portal.attach, access, tracer, responseCache,
    webRoutes: [
      { path: MCP_PATH, handler: async (req, peer) => await gatewayMcp.handle(req, peer) },
      { path: PORTAL_ASSISTANT_PATH, handler: createPortalAssistant({ config, store, logger, authenticate: gatewayMcp.authenticate, audit: o.audit }) }
    ]
  }
  // GATEWAY_THREADS > 1 (uws): more uWS event loops on worker threads, sharing the port (gateway/threads/).
  const threadCount = gatewayThreadCount(config)
  const threaded = threadCount > 1
    ? createThreadedGateway({
      ...options,
      threads: threadCount,
      limiterMemory: shared.limiterMemory ?? null,
      limiter: shared.limiterMemory === undefined ? null : shared.limiter as SharedMemoryLimiter,
      keyPrefix: o.keyPrefix,
      initialAccess: o.access()
    })
    : null
  const gateway: Gateway = threaded ?? createGateway(options)
  const threads = threaded?.threads ?? null
  if (threads !== null) {
    metrics.addSource(() => threads.prometheus())
    o.reload?.onAccess(a => { threads.setAccess(a) })
    // A management write answers once every thread serves the change.
    o.reload?.addSettleHook(async () => { await threads.settled() })
  }
  metrics.addSource(() => {
    const shed = gateway.shed
    return '# HELP gatehouse_gateway_shed_total Gateway requests answered 503 because the gateway was overloaded, by signal.\n# TYPE gatehouse_gateway_shed_total counter\n' +
      `gatehouse_gateway_shed_total{signal="in_flight"} ${shed.in_flight}\ngatehouse_gateway_shed_total{signal="event_loop_delay"} ${shed.event_loop_delay}\n`
  })
  metrics.addSource(() => gateway.upstreamMetrics())
  const stopCachePurges = hub.onBroadcast(CACHE_PURGE_CHANNEL, m => {
    const id = String((m as { proxy_id?: string }).proxy_id)
    threads?.purge(id)
    responseCache.dropLocal(id)
  })
  const { overlay } = workflows.listens

  return {
    gateway,
    threads,
    async purgeCache (proxyId) {
      // Threads first: with the main thread's one memory store, the stores they sent are taken before it is purged.
      threads?.purge(proxyId)
      await responseCache.purge(proxyId)
      hub.broadcast(CACHE_PURGE_CHANNEL, { proxy_id: proxyId })
    },
    // A proxy awaiting a trigger test-listen capture answers through its workflow even while it is disabled.
    routes: {
      name: 'gateway',
      apply: ({ full, delta, view }) => {
        if (full) gateway.setRoutes(view.collections(), view.proxies().map(overlay))
        else gateway.updateRoutes({ ...delta, proxies: delta.proxies.map(overlay) })
      }
    },
    portal: { name: 'portal', apply: ({ view }) => { portal.setRoutes(view) } },
    mcp: { name: 'gateway MCP', apply: ({ view }) => { gatewayMcp.setRoutes(view) } },
    listen: async () => await gateway.listen(),
    announce ({ port, tlsPort }) {
      const layer = config.GATEWAY_SERVER === 'node' ? 'node:http' : 'uWebSockets.js'
      logger.info(`gateway listening on http://${config.HOST}:${port} (${layer}${threadCount > 1 ? `, ${threadCount} threads` : ''})`)
      if (tlsPort !== null) logger.info(`gateway listening on https://${config.HOST}:${tlsPort} (${config.GATEWAY_SERVER === 'node' ? 'node:http2, HTTP/2 and HTTP/1.1' : 'node:https relay to uWebSockets.js'})${config.TLS_CA !== '' ? ' (client certificates checked against TLS_CA)' : ''}`)
    },
    async close () {
      stopCachePurges()
      await gateway.close().catch(() => {})
    }
  }
}
