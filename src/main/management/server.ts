/**
 * The management listener (node:http): /api/v1 REST, the event stream and the
 * management MCP, plus /livez and /readyz.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { errorBody } from '../../common/errors.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/types.js'
import type { EventSink } from '../events/types.js'
import type { Auth } from '../auth/verifier.js'
import { Router, type Reply, type RequestContext, type Route } from './router.js'
import { invoke, managementError, type Caller } from './operation.js'
import { parseJson, readBody } from './http-body.js'
import { collectionRoutes } from './collections-routes.js'
import { mountOperations } from './operation-routes.js'
import { createOperationDeps } from '../operations/effects.js'
import { proxyRoutes } from './proxies-routes.js'
import { workflowRoutes } from './workflow-routes.js'
import { importExportRoutes } from './import-export-routes.js'
import { threadRoutes } from './threads-routes.js'
import { auditRoutes } from './audit-routes.js'
import { accessRoutes } from './access-routes.js'
import { credentialRoutes } from './credentials-routes.js'
import { registerConfigRoutes } from './config-routes.js'
import { createAuditTrail, type AuditTrail } from './audit-trail.js'
import type { KeyValueCache } from '../cache/types.js'
import { createMemoryKv } from '../cache/memory-kv.js'
import { createManagementMcp } from '../mcp/management-mcp.js'
import { managementOpenApi } from './openapi.js'
import { createMcpSessions } from '../mcp/sessions.js'
import { builtUiDir, loadStaticFiles, type StaticFiles } from '../static/static-files.js'
import { consoleResponder } from '../static/console-files.js'

export interface ReadyReport { ok: boolean, checks: Record<string, string> }

export interface ManagementDeps {
  config: Readonly<Config>
  logger: Logger
  store: Store
  auth: Auth
  events: EventSink
  onConfigChange: () => void
  readiness: () => Promise<ReadyReport>
  /** Awaited after a successful write, before answering: lets this instance apply the change first. */
  settle?: () => Promise<void>
  /** Where management MCP sessions live (the shared cache: Redis when CACHE_TYPE=redis); default one instance's memory. */
  kv?: KeyValueCache
  /** The built management console served at / (default: dist/ui/console when built). */
  consoleFiles?: StaticFiles
}

export interface ManagementServer {
  router: Router
  /** Where the listener records changes and refusals; the management MCP records its tool calls here too. */
  audit: AuditTrail
  server: http.Server
  listen (): Promise<{ port: number }>
  close (): Promise<void>
}

const DEFAULT_BODY_LIMIT = 1024 * 1024

export function createManagementServer (deps: ManagementDeps): ManagementServer {
  const router = new Router()
  router.add('GET', '/livez', async () => ({ status: 200, body: { status: 'ok' } }), { public: true })
  router.add('GET', '/readyz', async () => {
    const r = await deps.readiness()
    return { status: r.ok ? 200 : 503, body: { status: r.ok ? 'ready' : 'not_ready', checks: r.checks } }
  }, { public: true })
  if (deps.auth.local !== null) {
    const jwks = { keys: [deps.auth.local.publicJwk] }
    router.add('GET', '/api/v1/auth/jwks.json', async () => ({ status: 200, body: jwks }), { public: true })
  }
  router.add('GET', '/api/v1/auth/config', async () => ({
    status: 200,
    body: {
      issuer: deps.auth.issuer,
      audience: deps.auth.audience === '' ? null : deps.auth.audience,
      client_id: deps.config.OIDC_CLIENT_ID === '' ? null : deps.config.OIDC_CLIENT_ID,
      scopes: ['openid', 'profile', 'email'],
      roles_claim: deps.config.OIDC_ROLES_CLAIM,
      local_issuer: deps.auth.mode === 'local',
      token_command: deps.auth.mode === 'local' ? 'npm run token -- --sub <you> --role <viewer|editor|admin>' : null,
      // Whether the console's assistant panel can chat (ASSISTANT_BASE_URL and ASSISTANT_MODEL set).
      assistant: deps.config.ASSISTANT_BASE_URL !== '' && deps.config.ASSISTANT_MODEL !== '',
      // The service serves CONFIG_FILE: the console shows that configuration changes are refused.
      config_file: deps.config.CONFIG_FILE !== ''
    }
  }), { public: true })
  const audit = createAuditTrail(deps.store, deps.logger)
  const mcp = createManagementMcp({
    config: deps.config,
    logger: deps.logger,
    auth: deps.auth,
    router,
    audit,
    settle: deps.settle,
    sessions: createMcpSessions(deps.kv ?? createMemoryKv(), { idleMs: deps.config.MCP_SESSION_IDLE_SECONDS * 1000, perUser: deps.config.MCP_SESSIONS_PER_USER, max: deps.config.MCP_SESSIONS_MAX })
  })
  const mcpPath = `/api/v1${deps.config.MANAGEMENT_MCP_PATH.replace(/\/+$/, '')}`
  // The MCP checks its own credentials (OIDC bearer only) and answers in JSON-RPC; each tool call is audited as itself.
  for (const method of ['POST', 'GET', 'DELETE']) router.add(method, mcpPath, async ctx => { await mcp.handle(ctx.req, ctx.res); return undefined }, { public: true, audit: false })
  let openApi: Record<string, unknown> | null = null
  router.add('GET', '/api/v1/openapi.json', async () => ({ status: 200, body: (openApi ??= managementOpenApi(router, { mcpPath })) }), { role: 'viewer' })
  const operations = createOperationDeps(deps)
  mountOperations(router, { ...operations, openApiLimits: { maxBytes: deps.config.OPENAPI_IMPORT_MAX_BYTES, maxOperations: deps.config.OPENAPI_IMPORT_MAX_OPERATIONS } }, importExportRoutes(deps.config.OPENAPI_IMPORT_MAX_BYTES))
  mountOperations(router, operations, collectionRoutes)
  mountOperations(router, operations, proxyRoutes)
  mountOperations(router, operations, workflowRoutes)
  mountOperations(router, operations, threadRoutes)
  mountOperations(router, operations, credentialRoutes)
  mountOperations(router, operations, accessRoutes)
  mountOperations(router, operations, auditRoutes)
  registerConfigRoutes(router, operations)

  const serveConsole = consoleResponder(deps.consoleFiles ?? loadStaticFiles(builtUiDir('console'), { spa: true }), (method, path) => {
    try { router.find(method, path); return true } catch { return false }
  }, () => deps.auth.browserOrigins())
  const server = http.createServer((req, res) => {
    if (serveConsole(req, res)) return
    handle(router, deps, audit, req, res).catch(() => {})
  })
  server.keepAliveTimeout = 5000
  server.headersTimeout = 30_000

  return {
    router,
    audit,
    server,
    async listen () {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(deps.config.MANAGEMENT_PORT, deps.config.MANAGEMENT_HOST, () => { server.off('error', reject); resolve() })
      })
      return { port: (server.address() as AddressInfo).port }
    },
    async close () {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      server.closeIdleConnections()
      // Long-lived streams (SSE) would hold the close forever.
      const timer = setTimeout(() => server.closeAllConnections(), deps.config.SHUTDOWN_TIMEOUT_MS)
      await closed
      clearTimeout(timer)
    }
  }
}

async function handle (router: Router, deps: ManagementDeps, audit: AuditTrail, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now()
  const url = new URL(req.url ?? '/', 'http://management')
  let status = 500
  let route: Route | undefined
  let ctx: RequestContext | undefined
  let reply: Reply | undefined
  try {
    const found = router.find(req.method ?? 'GET', url.pathname)
    route = found.route
    const params = found.params
    ctx = { req, res, params, query: url.searchParams, body: undefined, rawBody: null, user: null, ifMatch: parseIfMatch(req.headers['if-match']) }
    if (route.opts.public === true) reply = await route.handler(ctx)
    else {
      const fromQuery = route.opts.queryToken === true ? url.searchParams.get('access_token') : null
      const user = await deps.auth.verify(req.headers.authorization ?? (fromQuery === null ? undefined : `Bearer ${fromQuery}`))
      ctx.user = user
      const caller: Caller = { sub: user.sub, role: user.role, source: 'rest', exp: user.exp }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE'
      const readRequestBody = async () => {
        const raw = await readBody(req, found.route.opts.maxBodyBytes ?? DEFAULT_BODY_LIMIT)
        return found.route.opts.raw === true ? { body: undefined, rawBody: raw } : { body: parseJson(req, raw), rawBody: null }
      }
      reply = await invoke(route, caller, { params, query: url.searchParams, body: undefined, ifMatch: ctx.ifMatch },
        { req, res, settle: deps.settle, readBody: hasBody ? readRequestBody : undefined }, c => { ctx = c })
    }
    if (reply === undefined) { status = res.statusCode; return }
    status = reply.status
    send(res, reply.status, reply.body, reply.headers)
  } catch (err) {
    const e = managementError(err, deps.logger, { method: req.method, path: url.pathname })
    status = e.status
    if (!res.headersSent) send(res, e.status, errorBody(e), e.headers)
    else res.destroy()
  } finally {
    audit.observe({ req, path: url.pathname, route, ctx, status, reply })
    // One line per request, as data; probes only at debug (they arrive every few seconds). The query is left out: it may carry access_token.
    const line = { sub: ctx?.user?.sub ?? null, method: req.method, route: route === undefined ? null : '/' + route.segments.join('/'), path: url.pathname, status, ms: Math.round(performance.now() - started) }
    if (route?.opts.public === true && (url.pathname === '/livez' || url.pathname === '/readyz')) deps.logger.debug(line, 'management request')
    else deps.logger.info(line, 'management request')
  }
}

function send (res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  if (headers !== undefined) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v)
  if (body === undefined || status === 204) { res.writeHead(status).end(); return }
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text)
}

function parseIfMatch (v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '*') return undefined
  const m = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(v)
  return m === null ? -1 : Number(m[1])
}
