/**
 * The management MCP at /api/v1 + MANAGEMENT_MCP_PATH (streamable HTTP, official SDK).
 *
 *   request ──► Origin/Host check ─► no gateway headers ─► OIDC bearer ─► session flow (http-session.ts:
 *               initialize opens one, other calls need this user's, DELETE ends it) ─► SDK ─► tool ─► invoke(route)
 *
 * Sessions live in the shared key-value cache, not in the SDK's transport (http-session.ts, shared
 * with the gateway MCP), so any instance sharing the cache (Redis) serves any session. Every tool call is a management operation run through `invoke`, with the role
 * check of its REST route, the same validation, events and audit entries (source `mcp`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError, unauthorized } from '../../common/errors.js'
import type { Auth, User } from '../auth/verifier.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { AuditTrail } from '../management/audit-trail.js'
import { readBody } from '../management/http-body.js'
import type { Caller } from '../management/operation.js'
import type { Router } from '../management/router.js'
import { buildManagementTools, type ManagementTool } from './management-tools.js'
import type { McpSessions } from './sessions.js'
import { checkOrigin } from './origin.js'

export interface ManagementMcpDeps {
  config: Readonly<Config>
  logger: Logger
  auth: Auth
  router: Router
  audit: AuditTrail
  sessions: McpSessions
  settle?: () => Promise<void>
}

const MAX_BODY_BYTES = 8 * 1024 * 1024
/** JSON-RPC 2.0's "Invalid Request" code. */
const JSONRPC_INVALID_REQUEST = -32600

/**
 * The MCP SDK (and its schemas) loads with the first MCP request, not at start: most instances
 * serve none, and it is a good part of the service's start-up time and memory.
 */
const loadSdkSide = async () => await Promise.all([import('./http-session.js'), import('./management-mcp-server.js')])
export interface ManagementMcp {
  /** Handles one HTTP request to the MCP path (any method); always answers. */
  handle (req: IncomingMessage, res: ServerResponse): Promise<void>
  tools (): ManagementTool[]
}

export function createManagementMcp (deps: ManagementMcpDeps): ManagementMcp {
  let cached: ManagementTool[] | null = null
  // Routes are registered after the listener is created (run routes, metrics): build on first use.
  const tools = (): ManagementTool[] => (cached ??= buildManagementTools(deps.router.routes))

  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code: number = JSONRPC_INVALID_REQUEST): void => {
    if (status === 401 || status === 403) {
      deps.audit.record([{ actor_sub: null, source: 'mcp', action: 'denied', resource_kind: null, resource_id: null, method: req.method ?? null, path: pathOnly(req), status, remote_addr: req.socket.remoteAddress ?? null }])
    }
    const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text)
  }

  async function handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = checkOrigin(req.headers, deps.config)
    if (origin !== null) { refuse(req, res, 403, origin); return }
    if (req.headers['x-client-id'] !== undefined || req.headers['x-profile-id'] !== undefined) {
      refuse(req, res, 401, 'The management MCP takes a management (OIDC) bearer token only; do not send X-Client-ID or X-Profile-ID (those are for the gateway MCP at /mcp).', { 'www-authenticate': 'Bearer' })
      return
    }
    let user: User
    try {
      user = await deps.auth.verify(req.headers.authorization)
    } catch (err) {
      const e = err instanceof AppError ? err : unauthorized()
      refuse(req, res, e.status, e.message, e.headers ?? {})
      return
    }
    if (req.method !== 'POST' && req.method !== 'DELETE') {
      refuse(req, res, 405, 'Use POST (JSON-RPC messages) or DELETE (end the session); this server sends no messages outside a request.', { allow: 'POST, DELETE' })
      return
    }
    const raw = req.method === 'POST' ? await readBody(req, MAX_BODY_BYTES) : null
    const caller: Caller = { sub: user.sub, role: user.role, source: 'mcp' }
    const [{ serveMcpRequest }, { buildManagementMcpServer }] = await loadSdkSide()
    const response = await serveMcpRequest(webRequest(req, raw), {
      // Namespaced: a gateway MCP session (owned by a profile) is never a management one.
      owner: `oidc:${user.sub}`,
      sessions: deps.sessions,
      build: () => buildManagementMcpServer({ deps, tools, caller, req, res }),
      stream: true
    })
    await pipe(response, res)
  }

  return { handle, tools }
}

const pathOnly = (req: IncomingMessage): string => (req.url ?? '/').split('?')[0]! // split gives at least one element

function webRequest (req: IncomingMessage, raw: Buffer | null): Request {
  const headers = new Headers()
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one)
  }
  return new Request(`http://${req.headers.host ?? 'management'}${req.url ?? '/'}`, { method: req.method, headers, body: raw === null ? undefined : new Uint8Array(raw) })
}

async function pipe (response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((v, k) => { headers[k] = v })
  res.writeHead(response.status, headers)
  if (response.body === null) { res.end(); return }
  const reader = response.body.getReader()
  res.on('close', () => { reader.cancel().catch(() => {}) })
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (!res.write(value)) await new Promise<void>(resolve => { res.once('drain', resolve); res.once('close', resolve) })
  }
  res.end()
}
