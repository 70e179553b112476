/**
 * The management subsystem: the management listener (REST, management MCP, console), the routes
 * that need other subsystems (workflow runs and listens, triggers, response cache, upstream
 * health, request logs and metrics, the assistant) and the event stream.
 */
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { AppError } from '../../common/errors.js'
import { createAuth } from '../auth/verifier.js'
import { handleEventStream, StreamLimits } from '../events/sse.js'
import type { EventHub } from '../events/hub.js'
import { loopbackFor, urlHost } from '../gateway/listener.js'
import { createManagementServer, type ManagementServer } from '../management/server.js'
import type { Router } from '../management/router.js'
import { removeManagementAddress, writeManagementAddress } from '../management/address-file.js'
import { registerObservabilityRoutes } from '../management/observability-routes.js'
import { registerWorkflowRunRoutes } from '../management/workflow-run-routes.js'
import { registerTriggerRoutes } from '../management/trigger-routes.js'
import { registerCacheRoutes } from '../management/cache-routes.js'
import { registerUpstreamRoutes } from '../management/upstream-routes.js'
import { registerAssistantRoutes } from '../assistant/routes.js'
import type { ConfigReload } from './config-reload.js'
import type { GatewaySubsystem } from './gateway.js'
import type { ObservabilitySubsystem } from './observability.js'
import type { StoreSubsystem } from './store.js'
import type { Subsystem } from './subsystem.js'
import type { WorkflowsSubsystem } from './workflows.js'

export interface ManagementSubsystem extends Subsystem {
  server: ManagementServer
  /** Signs a management token with the local issuer (null when OIDC is configured). */
  issueToken: ((sub: string, role: 'viewer' | 'editor' | 'admin') => Promise<string>) | null
  listen (): Promise<{ port: number }>
  announce (): void
}

export interface ManagementStartOptions {
  config: Readonly<Config>
  logger: Logger
  store: StoreSubsystem
  observability: ObservabilitySubsystem
  reload: ConfigReload
  workflows: WorkflowsSubsystem
  gateway: GatewaySubsystem
}

export async function startManagement (o: ManagementStartOptions): Promise<ManagementSubsystem> {
  const { config, logger, reload, workflows, gateway } = o
  const { store, shared, hub, requestLogs } = o.store
  const { triggers } = workflows
  const auth = await createAuth(config, logger)
  const management = createManagementServer({
    config, logger, store, auth, readiness: o.store.readiness, kv: shared.kv,
    // Changes made here also tell every instance's triggers (spec: trigger synchronisation). The
    // event streams hear of a change once this instance serves it, a turn after the write's answer
    // (which waits for the same reload): the answer never waits behind the fan-out.
    events: { publish: e => { triggers.notify(e); queueMicrotask(() => { void reload.settled().then(() => { setImmediate(() => hub.publish(e)) }) }) } },
    onConfigChange: () => { reload.changed() },
    settle: async () => { await reload.settled() }
  })
  const { router } = management
  registerObservabilityRoutes(router, requestLogs, o.observability.metrics)
  registerWorkflowRunRoutes(router, { store, runner: workflows.runner, listens: workflows.listens, capture: triggers.capture, logger })
  registerTriggerRoutes(router, { store, health: triggers.health })
  registerCacheRoutes(router, { store, purge: gateway.purgeCache })
  registerUpstreamRoutes(router, { store, health: id => gateway.gateway.upstreamHealth(id) })
  let port = 0
  const loopbackUrl = () => `http://${urlHost(loopbackFor(config.MANAGEMENT_HOST))}:${port}`
  registerAssistantRoutes(router, { config, store, logger, audit: management.audit, mcpUrl: () => `${loopbackUrl()}/api/v1${config.MANAGEMENT_MCP_PATH}` })
  addEventStream(router, hub, config)
  const local = auth.local

  return {
    server: management,
    issueToken: local === null ? null : async (sub, role) => await local.sign({ sub, role }),
    async listen () {
      ({ port } = await management.listen())
      return { port }
    },
    announce () {
      logger.info(`management API listening on http://${config.MANAGEMENT_HOST}:${port}/api/v1`)
      // `npm run token -- --url` with this DATA_DIR links to this port, whatever its own environment says.
      try { writeManagementAddress(config.DATA_DIR, loopbackUrl()) } catch (err) {
        logger.warn({ err: (err as Error).message }, `could not write ${config.DATA_DIR}/management.json; npm run token -- --url will need --port`)
      }
      if (auth.mode === 'local') {
        logger.info('management tokens come from the built-in local issuer: npm run token -- --sub alice --role admin')
      } else logger.info({ issuer: auth.issuer }, 'management tokens are verified against the configured OIDC issuer')
    },
    async close () {
      // Open event streams would hold the management listener's close for SHUTDOWN_TIMEOUT_MS: end them first.
      hub.endSubscriptions()
      await management.close().catch(() => {})
      try { removeManagementAddress(config.DATA_DIR) } catch {}
    }
  }
}

/** GET /api/v1/events/stream: the change stream (SSE), bounded per user and in all. */
function addEventStream (router: Router, hub: EventHub, config: Readonly<Config>): void {
  const limits = new StreamLimits(config.SSE_MAX_STREAMS, config.SSE_MAX_STREAMS_PER_USER)
  router.add('GET', '/api/v1/events/stream', async ctx => {
    const slot = limits.acquire(ctx.user!.sub)
    if (slot instanceof AppError) throw slot
    try {
      await handleEventStream(ctx.req, ctx.res, hub, { pingIntervalMs: config.SSE_PING_INTERVAL_MS, expiresAt: ctx.user!.exp === undefined ? undefined : ctx.user!.exp * 1000 })
    } finally { slot.release() }
    return undefined
  }, { role: 'viewer', queryToken: true })
}
