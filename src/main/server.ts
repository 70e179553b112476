/**
 * Wires the service together and owns its lifetime: store, shared state, event
 * hub, management listener, gateway listener, route-table reloads, shutdown.
 */
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import type { Config } from './config/config.js'
import { createLogger, type Logger } from './logger.js'
import { openStore, type Store } from './store/index.js'
import { createSharedState } from './cache/shared-state.js'
import { persistQuotas, type QuotaPersistence } from './access/quota-persistence.js'
import { createEventHub } from './events/hub.js'
import { handleEventStream, StreamLimits } from './events/sse.js'
import { removeManagementAddress, writeManagementAddress } from './management/address-file.js'
import { AppError } from '../common/errors.js'
import { createAuth } from './auth/verifier.js'
import { createManagementServer } from './management/server.js'
import { createGateway, type Gateway, type ReadyReport } from './gateway/index.js'
import { createPortal } from './static/portal.js'
import { builtUiDir, loadStaticFiles } from './static/static-files.js'
import { registerObservabilityRoutes } from './management/observability-routes.js'
import { Metrics } from './observability/metrics.js'
import { createTracer } from './observability/tracing/tracer.js'
import { RequestLogWriter } from './observability/request-log.js'
import type { RequestRecord } from './observability/types.js'
import { tableRequestLog, type RequestLogStore } from './store/request-logs.js'
import { RequestLogFiles } from './observability/request-log-files.js'
import { createWorkflowPool, RUNS_PER_WORKER } from './workflows/pool.js'
import { EMPTY_ACCESS, loadAccessSnapshot, type AccessSnapshot } from './access/snapshot.js'
import { checkKeyMatches, decryptSecret, encryptSecret, loadSecretsKey } from './credentials/secrets.js'
import { openConfig, sealConfig } from './credentials/secret-fields.js'
import type { CredentialType } from './credentials/types.js'
import type { HttpCredential } from '../workers/engine/types.js'
import { createRunner } from './workflows/runner.js'
import { createTriggerListens } from './workflows/trigger-listen.js'
import { gatewayWorkflows } from './workflows/listen-gateway.js'
import { registerWorkflowRunRoutes } from './management/workflow-run-routes.js'
import { registerTriggerRoutes } from './management/trigger-routes.js'
import { registerCacheRoutes } from './management/cache-routes.js'
import { ResponseCache } from './gateway/responses/response-cache.js'
import { createMemoryStore, createRedisStore } from './gateway/responses/cache-store.js'
import { registerUpstreamRoutes } from './management/upstream-routes.js'
import { createTriggers } from './triggers/index.js'
import { createRouteReloader } from './routes/reloader.js'
import { createGatewayMcp } from './mcp/gateway-mcp.js'
import { createMcpSessions } from './mcp/sessions.js'
import { MCP_PATH } from './gateway/mcp-route.js'
import { loopbackFor, urlHost } from './gateway/listener.js'
import { createPortalAssistant, PORTAL_ASSISTANT_PATH, registerAssistantRoutes } from './assistant/routes.js'

/** Broadcast channel on which an instance tells the others that the configuration changed. */
const CONFIG_CHANNEL = 'config-changed'
/** Broadcast channel of response-cache purges (each instance drops the proxy's entries in its memory). */
const CACHE_PURGE_CHANNEL = 'response-cache-purge'

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
  close (): Promise<void>
}

export interface StartOptions {
  logger?: Logger
  /** Prefix for Redis keys and channels (lets several deployments share one Redis). */
  keyPrefix?: string
}

export async function start (config: Readonly<Config>, opts: StartOptions = {}): Promise<Service> {
  const logger = opts.logger ?? createLogger(config)
  const env = Object.freeze({ ...process.env })
  const instanceId = randomUUID()
  const store = await openStore(config, logger)
  const shared = createSharedState({ config, logger, keyPrefix: opts.keyPrefix })
  const hub = createEventHub({ config, logger, redis: shared.redis, keyPrefix: opts.keyPrefix })

  const readiness = async (): Promise<ReadyReport> => {
    const checks: Record<string, string> = {}
    checks.database = await store.ping().then(() => 'ok', (err: Error) => `unreachable: ${err.message}`)
    if (config.CACHE_TYPE === 'redis') {
      checks.redis = await shared.redis!.ping().then(() => 'ok', (err: Error) => `unreachable: ${err.message}`)
    }
    return { ok: Object.values(checks).every(v => v === 'ok'), checks }
  }

  const secretsKey = await loadSecretsKey({ secretsKey: config.SECRETS_KEY, dataDir: config.DATA_DIR })
  let requestLogs: RequestLogStore
  let quotas: QuotaPersistence | null = null
  try {
    await checkStoredSecrets(store, secretsKey, logger)
    await resealLegacySecrets(store, secretsKey, logger)
    // The embedded store's request log is kept in files beside it (cheaper per request than its rows).
    if (store.kind === 'embedded') {
      const files = await RequestLogFiles.open(path.join(config.DATA_DIR, 'request-log'))
      const moved = await files.takeOver(store)
      if (moved > 0) logger.info({ rows: moved }, 'request log: rows kept in the embedded store by an earlier version moved to its files')
      requestLogs = files
    } else {
      requestLogs = tableRequestLog(store)
    }
    // Without Redis, quota counters live in memory: written behind to the store, read back here.
    quotas = shared.quotaCounters === undefined ? null : await persistQuotas(shared.quotaCounters, store, logger, config.QUOTA_FLUSH_MS)
  } catch (err) {
    await Promise.allSettled([hub.close(), shared.close()])
    await store.close().catch(() => {})
    throw err
  }
  const metrics = new Metrics()
  // Null without an OTLP endpoint: nothing is traced and nothing is built per request.
  const tracer = createTracer(config, logger)
  if (tracer !== null) metrics.addSource(() => tracer.prometheus())
  const requestLog = config.REQUEST_LOG_RETENTION_HOURS > 0
    ? new RequestLogWriter({ sink: async records => { await requestLogs.insert(records) }, logger })
    : null
  if (requestLog !== null) metrics.addSource(() => requestLog.prometheus().join('\n') + '\n')
  const observe = (r: RequestRecord) => { metrics.record(r); requestLog?.append(r) }
  const pool = createWorkflowPool(config.WORKERS)
  const runner = createRunner({
    store, pool, logger, kv: shared.kv, tracer,
    outboundAllowlist: config.OUTBOUND_ALLOWLIST,
    keepPerWorkflow: config.EXECUTIONS_PER_WORKFLOW,
    credentials: async ids => await openHttpCredentials(store, secretsKey, ids),
    // Sub-workflows and opened credentials are read once per saved definition, until any change.
    configVersion: () => routes.version,
    // Half the pool's run slots per proxy by default: a flood on one proxy leaves the other half to the rest.
    defaultLimits: { maxQueue: 100, maxConcurrent: Math.max(2, config.WORKERS * RUNS_PER_WORKER / 2) }
  })
  // A listen session started or ended: its proxy's route is overlaid again at once (no store change).
  const listens = createTriggerListens({ onChange: proxyId => { routes.refresh(proxyId) } })
  const workflows = gatewayWorkflows(runner, listens)
  const triggers = createTriggers({ store, runner, hub, kv: shared.kv, locks: shared.locks, logger, secretsKey, heartbeatMs: config.TRIGGER_HEARTBEAT_MS })
  metrics.addSource(() => triggers.prometheus())
  metrics.addSource(() => {
    const n = pool.running()
    return '# HELP gatehouse_workflow_threads Worker threads running workflows, by lane (they start with the first workflow served).\n# TYPE gatehouse_workflow_threads gauge\n' +
      `gatehouse_workflow_threads{lane="light"} ${n.light}\ngatehouse_workflow_threads{lane="cpu"} ${n.cpu}\n`
  })
  metrics.addSource(() => {
    const shed = gateway.shed
    return '# HELP gatehouse_gateway_shed_total Gateway requests answered 503 because the gateway was overloaded, by signal.\n# TYPE gatehouse_gateway_shed_total counter\n' +
      `gatehouse_gateway_shed_total{signal="in_flight"} ${shed.in_flight}\ngatehouse_gateway_shed_total{signal="event_loop_delay"} ${shed.event_loop_delay}\n`
  })
  metrics.addSource(() => gateway.upstreamMetrics())
  const access: { current: AccessSnapshot } = { current: EMPTY_ACCESS }
  const portal = createPortal(loadStaticFiles(builtUiDir('portal'), { spa: false }))
  const gatewayAccess = { profiles: () => access.current.profiles, policies: () => access.current.policies, limiter: shared.limiter }
  // Agents' MCP on the gateway listener; its sessions live in the shared cache like the management MCP's.
  const gatewayMcp = createGatewayMcp({
    access: gatewayAccess,
    sessions: createMcpSessions(shared.kv, { prefix: 'gmcp', idleMs: config.MCP_SESSION_IDLE_SECONDS * 1000, perUser: config.MCP_SESSIONS_PER_USER, max: config.MCP_SESSIONS_MAX }),
    logger,
    executeTimeoutMs: config.UPSTREAM_TIMEOUT_MS + 5_000,
    config
  })
  // With CACHE_TYPE=redis cached answers live in Redis: every instance serves what one fetched.
  const responseCache = new ResponseCache(
    shared.redis !== undefined ? createRedisStore(shared.redis, opts.keyPrefix ?? 'gatehouse:', logger) : createMemoryStore(config.RESPONSE_CACHE_MAX_BYTES),
    config.RESPONSE_CACHE_MAX_ENTRY_BYTES)
  metrics.addSource(() => responseCache.prometheus())
  const gateway = createGateway({
    config, logger, readiness, env, observe, workflows, mount: portal.attach, access: gatewayAccess, tracer, responseCache,
    webRoutes: [
      { path: MCP_PATH, handler: async (req, peer) => await gatewayMcp.handle(req, peer) },
      { path: PORTAL_ASSISTANT_PATH, handler: createPortalAssistant({ config, store, logger, authenticate: gatewayMcp.authenticate, audit: () => management.audit }) }
    ]
  })
  // A proxy awaiting a trigger test-listen capture answers through its workflow even while it is disabled.
  // Every reload also reconciles production triggers: the route table's proxies are exactly the served ones.
  const routes = createRouteReloader({
    store,
    logger,
    reloadAccess: async () => { access.current = await loadAccessSnapshot(store, secretsKey) },
    // O(what changed) on every consumer; a full update (start, long gap) diffs the whole picture.
    apply: ({ full, delta, view }) => {
      // The first workflow served starts the worker thread, before its first request needs it.
      if ((full ? view.proxies() : delta.proxies).some(p => p.workflow_enabled && p.workflow !== null)) pool.warm()
      if (full) gateway.setRoutes(view.collections(), view.proxies().map(listens.overlay))
      else gateway.updateRoutes({ ...delta, proxies: delta.proxies.map(listens.overlay) })
      portal.setRoutes(view)
      gatewayMcp.setRoutes(view)
      metrics.setRoutes(view, full ? undefined : delta.removedProxies)
      void (full ? triggers.supervisor.reconcileAll(view.proxies()) : triggers.supervisor.reconcile(delta.proxies, delta.removedProxies))
    }
  })
  await routes.reload()

  let pendingReload: Promise<void> = Promise.resolve()
  const auth = await createAuth(config, logger)
  const management = createManagementServer({
    config, logger, store, auth, readiness, kv: shared.kv,
    // Changes made here also tell every instance's triggers (spec: trigger synchronisation). The
    // event streams hear of a change once this instance serves it, a turn after the write's answer
    // (which waits for the same reload): the answer never waits behind the fan-out.
    events: { publish: e => { triggers.notify(e); queueMicrotask(() => { void pendingReload.then(() => { setImmediate(() => hub.publish(e)) }) }) } },
    onConfigChange: () => {
      pendingReload = routes.reload().catch(() => {})
      // Other instances reload at once through Redis; the store poll below stays the fallback.
      hub.broadcast(CONFIG_CHANNEL, { from: instanceId })
    },
    settle: async () => { await pendingReload }
  })
  registerObservabilityRoutes(management.router, requestLogs, metrics)
  registerWorkflowRunRoutes(management.router, { store, runner, listens, capture: triggers.capture, logger })
  registerTriggerRoutes(management.router, { store, health: triggers.health })
  registerCacheRoutes(management.router, {
    store,
    purge: async proxyId => {
      await responseCache.purge(proxyId)
      hub.broadcast(CACHE_PURGE_CHANNEL, { proxy_id: proxyId })
    }
  })
  registerUpstreamRoutes(management.router, { store, health: id => gateway.upstreamHealth(id) })
  let managementPort = 0
  registerAssistantRoutes(management.router, {
    config, store, logger, audit: management.audit, mcpUrl: () => `http://${urlHost(loopbackFor(config.MANAGEMENT_HOST))}:${managementPort}/api/v1${config.MANAGEMENT_MCP_PATH}`
  })
  const streamLimits = new StreamLimits(config.SSE_MAX_STREAMS, config.SSE_MAX_STREAMS_PER_USER)
  management.router.add('GET', '/api/v1/events/stream', async ctx => {
    const slot = streamLimits.acquire(ctx.user!.sub)
    if (slot instanceof AppError) throw slot
    try {
      await handleEventStream(ctx.req, ctx.res, hub, { pingIntervalMs: config.SSE_PING_INTERVAL_MS, expiresAt: ctx.user!.exp === undefined ? undefined : ctx.user!.exp * 1000 })
    } finally { slot.release() }
    return undefined
  }, { role: 'viewer', queryToken: true })

  const [{ port: mPort }, { port: gatewayPort, tlsPort: gatewayTlsPort }] = await Promise.all([management.listen(), gateway.listen()])
  managementPort = mPort
  logger.info({ store: store.kind, data_dir: store.kind === 'embedded' ? config.DATA_DIR : undefined, cache: config.CACHE_TYPE },
    `store: ${store.kind === 'embedded' ? `embedded (PGlite) in ${config.DATA_DIR}` : 'PostgreSQL'}; cache: ${config.CACHE_TYPE}`)
  const layer = config.GATEWAY_SERVER === 'node' ? 'node:http' : 'uWebSockets.js'
  logger.info(`gateway listening on http://${config.HOST}:${gatewayPort} (${layer})`)
  if (gatewayTlsPort !== null) logger.info(`gateway listening on https://${config.HOST}:${gatewayTlsPort} (${config.GATEWAY_SERVER === 'node' ? 'node:http2, HTTP/2 and HTTP/1.1' : 'node:https relay to uWebSockets.js'})${config.TLS_CA !== '' ? ' (client certificates checked against TLS_CA)' : ''}`)
  logger.info(`management API listening on http://${config.MANAGEMENT_HOST}:${managementPort}/api/v1`)
  // `npm run token -- --url` with this DATA_DIR links to this port, whatever its own environment says.
  try { writeManagementAddress(config.DATA_DIR, `http://${urlHost(loopbackFor(config.MANAGEMENT_HOST))}:${managementPort}`) } catch (err) {
    logger.warn({ err: (err as Error).message }, `could not write ${config.DATA_DIR}/management.json; npm run token -- --url will need --port`)
  }
  if (auth.mode === 'local') {
    logger.info('management tokens come from the built-in local issuer: npm run token -- --sub alice --role admin')
  } else logger.info({ issuer: auth.issuer }, 'management tokens are verified against the configured OIDC issuer')

  // A change made on another instance (through Redis), or a Redis link restored (broadcasts sent meanwhile are lost).
  const reloadSoon = () => { pendingReload = routes.reload().catch(() => {}) }
  const stopConfigBroadcasts = hub.onBroadcast(CONFIG_CHANNEL, m => { if ((m as { from?: string }).from !== instanceId) reloadSoon() })
  const stopCachePurges = hub.onBroadcast(CACHE_PURGE_CHANNEL, m => { responseCache.dropLocal(String((m as { proxy_id?: string }).proxy_id)) })
  const stopReconnect = hub.onReconnect(reloadSoon)
  // Instances without a shared cache still converge: each polls the store's change counter.
  const poll = setInterval(() => { routes.pollOnce().catch(() => {}) }, config.CONFIG_POLL_INTERVAL_MS)
  poll.unref()
  // Request log retention: prune hourly (and once at start).
  const prune = () => {
    if (requestLog === null) return
    requestLogs.prune(new Date(Date.now() - config.REQUEST_LOG_RETENTION_HOURS * 3_600_000))
      .catch((err: Error) => logger.warn({ err: err.message }, 'request log pruning failed'))
  }
  prune()
  const pruneTimer = setInterval(prune, 3_600_000)
  pruneTimer.unref()

  let closing: Promise<void> | undefined
  const close = async () => {
    closing ??= (async () => {
      // Open event streams would hold the management listener's close for SHUTDOWN_TIMEOUT_MS: end them first.
      hub.endSubscriptions()
      clearInterval(poll)
      stopConfigBroadcasts()
      stopCachePurges()
      stopReconnect()
      await triggers.close()
      listens.close()
      clearInterval(pruneTimer)
      await Promise.allSettled([gateway.close(), management.close()])
      try { removeManagementAddress(config.DATA_DIR) } catch {}
      await requestLog?.close().catch(() => {})
      await requestLogs.close?.().catch(() => {})
      await pool.close().catch(() => {})
      await runner.settled()
      // After the gateway stopped admitting: the last quota hits are written before the store closes.
      await quotas?.close().catch(err => { logger.warn({ err: (err as Error).message }, 'quota counters could not be written at stop') })
      await tracer?.shutdown()
      await Promise.allSettled([hub.close(), shared.close()])
      await store.close()
      logger.flush()
    })()
    return await closing
  }
  const local = auth.local
  const issueToken = local === null ? null : async (sub: string, role: 'viewer' | 'editor' | 'admin') => await local.sign({ sub, role })
  return { gatewayPort, gatewayTlsPort, managementPort, store, requestLogs, logger, reloadRoutes: routes.reload, issueToken, close }
}

/** The HTTP credentials among `ids`, opened for one run (a missing or unreadable one is left out: its node fails saying so). */
async function openHttpCredentials (store: Store, key: Buffer, ids: string[]): Promise<Record<string, HttpCredential>> {
  const { rows } = await store.query<{ id: string, type: string, config: unknown }>('SELECT id, type, config FROM credentials WHERE id = ANY($1::text[])', [ids])
  const out: Record<string, HttpCredential> = {}
  for (const r of rows) {
    if (!HTTP_CREDENTIAL_TYPES.has(r.type)) continue
    try { out[r.id] = { type: r.type, config: openConfig(key, r.type as CredentialType, typeof r.config === 'string' ? JSON.parse(r.config) : r.config, r.id) } as HttpCredential } catch {}
  }
  return out
}
const HTTP_CREDENTIAL_TYPES = new Set(['http_basic', 'http_bearer', 'http_header', 'oauth2_client_credentials'])

/**
 * Secrets sealed before they were bound to their record (v1) are sealed again bound to it (v2),
 * so a value copied into another record no longer opens there. Idempotent; concurrent starts
 * re-seal the same value at worst twice. A value that does not open is left for its route to report.
 */
async function resealLegacySecrets (store: Store, key: Buffer, logger: Logger): Promise<void> {
  let done = 0
  try {
    const { rows: ps } = await store.query<{ id: string, auth_type: string, secret_sealed: string }>("SELECT id, auth_type, secret_sealed FROM profiles WHERE secret_sealed LIKE 'v1:%'")
    for (const p of ps) {
      const context = p.auth_type === 'api_key' ? 'profile.api_key' : 'profile.jwt_secret'
      let plain: string
      try { plain = decryptSecret(key, p.secret_sealed, context) } catch { continue }
      await store.query('UPDATE profiles SET secret_sealed = $2 WHERE id = $1 AND secret_sealed = $3', [p.id, encryptSecret(key, plain, context, p.id), p.secret_sealed])
      done++
    }
    const { rows: cs } = await store.query<{ id: string, type: string, config: unknown }>("SELECT id, type, config FROM credentials WHERE config::text LIKE '%\"v1:%'")
    for (const c of cs) {
      const config = typeof c.config === 'string' ? JSON.parse(c.config) : c.config
      let resealed: unknown
      try { resealed = sealConfig(key, c.type as CredentialType, openConfig(key, c.type as CredentialType, config), c.id) } catch { continue }
      await store.query('UPDATE credentials SET config = $2 WHERE id = $1', [c.id, JSON.stringify(resealed)])
      done++
    }
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'stored secrets could not be re-sealed to their records; retried at the next start')
    return
  }
  if (done > 0) logger.info({ records: done }, 'stored secrets re-sealed, bound to their records')
}

/** A few sealed values from the store, checked against the configured key (see checkKeyMatches). */
async function checkStoredSecrets (store: Store, key: Buffer, logger: Logger): Promise<void> {
  let sample: string[]
  try {
    const { rows } = await store.query<{ t: string }>(`(SELECT secret_sealed AS t FROM profiles WHERE secret_sealed IS NOT NULL ORDER BY created_at DESC LIMIT 20)
      UNION ALL (SELECT config::text AS t FROM credentials ORDER BY created_at DESC LIMIT 20)`)
    sample = rows.map(r => r.t)
  } catch (err) {
    // The store went away just after opening: start degraded rather than not at all.
    logger.warn({ err: (err as Error).message }, 'the secrets key could not be checked against the store')
    return
  }
  checkKeyMatches(key, sample)
}
