/**
 * Wires the service together and owns its lifetime. Each subsystem (./startup/) is a function
 * returning what it exposes and how it closes; `start` composes them in this order and closes
 * them in reverse:
 *
 *   store ──▶ observability ──▶ workflows ──▶ gateway ──▶ management ──▶ follow changes
 *   store, shared cache,   metrics,     pool, runner,  gateway, portal,   listener, its    broadcasts,
 *   hub, request log,      tracer,      listens,       gateway MCP,       extra routes,    Redis reconnects,
 *   quotas, secrets key    request log  triggers       response cache     event stream     store poll
 *
 * A configuration change (routes/reloader.ts) is applied to one list of consumers, set once below.
 */
import type { Config } from './config/config.js'
import { createLogger, type Logger } from './logger.js'
import type { Store } from './store/index.js'
import type { RequestLogStore } from './store/request-logs.js'
import { startStore } from './startup/store.js'
import { startObservability } from './startup/observability.js'
import { createConfigReload } from './startup/config-reload.js'
import { startWorkflows } from './startup/workflows.js'
import { startGateway } from './startup/gateway.js'
import { startManagement } from './startup/management.js'
import { closeInReverse } from './startup/subsystem.js'
import { createConfigFileSource } from './config-file/file-source.js'
import { refuseConfigurationWrites } from './config-file/read-only.js'
import type { GatewayThreads } from './gateway/threads/pool.js'

export interface Service {
  gatewayPort: number
  /** The gateway's TLS port, when TLS_CERT and TLS_KEY are set. */
  gatewayTlsPort: number | null
  managementPort: number
  store: Store
  /** The request log: the store's table on PostgreSQL, files in DATA_DIR/request-log on the embedded store. */
  requestLogs: RequestLogStore
  logger: Logger
  reloadRoutes (): Promise<void>
  /** Signs a management token with the local issuer (null when OIDC is configured). */
  issueToken: ((sub: string, role: 'viewer' | 'editor' | 'admin') => Promise<string>) | null
  /** With CONFIG_FILE: reads the file again and applies it (SIGHUP); a bad file is logged and changes nothing. */
  reloadConfigFile: (() => Promise<void>) | null
  /** The gateway's worker threads (GATEWAY_THREADS > 1 with uws), else null. */
  gatewayThreads: GatewayThreads | null
  close (): Promise<void>
}

export interface StartOptions {
  logger?: Logger
  /** Prefix for Redis keys and channels (lets several deployments share one Redis). */
  keyPrefix?: string
}

export async function start (config: Readonly<Config>, opts: StartOptions = {}): Promise<Service> {
  const logger = opts.logger ?? createLogger(config)
  const store = await startStore(config, logger, opts.keyPrefix)
  // CONFIG_FILE: the gateway becomes the file before anything serves (a bad file stops the start).
  const configFile = config.CONFIG_FILE === '' ? null : createConfigFileSource({ path: config.CONFIG_FILE, store: store.store, secretsKey: store.secretsKey, env: process.env })
  if (configFile !== null) {
    try {
      const r = await configFile.load()
      logger.info({ config_file: configFile.path, changes: r.changes.length, version: r.version }, `configuration loaded from CONFIG_FILE ${configFile.path}; management writes are refused (409)`)
    } catch (err) {
      await closeInReverse([store])
      throw err
    }
  }
  const observability = startObservability(config, logger, store.requestLogs)
  const reload = createConfigReload({ store: store.store, logger, secretsKey: store.secretsKey, hub: store.hub })
  const workflows = startWorkflows({ config, logger, store, metrics: observability.metrics, tracer: observability.tracer, routes: reload.routes })
  const gateway = startGateway({
    config, logger, store, observability, workflows, access: reload.access, reload, keyPrefix: opts.keyPrefix,
    // Read per assistant request, once the management listener (started below) exists.
    audit: () => management.server.audit
  })
  // Everything that serves from the configuration, in the order a change reaches it.
  await reload.serve([workflows.warmUp, workflows.mailboxes, gateway.routes, gateway.portal, gateway.mcp, observability.consumer, workflows.reconcile])
  const management = await startManagement({ config, logger, store, observability, reload, workflows, gateway })
  if (configFile !== null) refuseConfigurationWrites(management.server.router, configFile.path)

  const [{ port: managementPort }, gatewayPorts] = await Promise.all([management.listen(), gateway.listen()])
  store.announce()
  gateway.announce(gatewayPorts)
  management.announce()
  const started = [store, observability, workflows, gateway, management, reload.follow(config)]

  let closing: Promise<void> | undefined
  const close = async () => {
    closing ??= closeInReverse(started).then(() => { logger.flush() })
    return await closing
  }
  return {
    gatewayPort: gatewayPorts.port,
    gatewayTlsPort: gatewayPorts.tlsPort,
    managementPort,
    store: store.store,
    requestLogs: store.requestLogs,
    logger,
    reloadRoutes: reload.routes.reload,
    issueToken: management.issueToken,
    reloadConfigFile: configFile === null
      ? null
      : async () => {
        try {
          const r = await configFile.load()
          if (!r.applied) { logger.info({ config_file: configFile.path }, 'CONFIG_FILE reloaded: the gateway already matches it'); return }
          // As a management write: triggers hear at once, event streams once this instance serves the change.
          reload.changed()
          for (const e of r.events) workflows.triggers.notify(e)
          void reload.settled().then(() => { for (const e of r.events) store.hub.publish(e) })
          logger.info({ config_file: configFile.path, changes: r.changes.length, version: r.version }, 'CONFIG_FILE reloaded')
        } catch (err) {
          logger.error({ err: (err as Error).message }, 'CONFIG_FILE reload failed; the running configuration stays')
        }
      },
    gatewayThreads: gateway.threads,
    close
  }
}
