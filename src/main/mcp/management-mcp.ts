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
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult
} from '@modelcontextprotocol/sdk/types.js'
import { AppError, errorBody, serviceUnavailable, toAppError, unauthorized } from '../../common/errors.js'
import type { Auth, User } from '../auth/verifier.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { isDatabaseUnavailable } from '../store/types.js'
import type { AuditTrail } from '../management/audit-trail.js'
import { readBody } from '../management/http-body.js'
import { invoke, type Caller, type FrameSink } from '../management/operation.js'
import type { RequestContext, Router } from '../management/router.js'
import { serveMcpRequest } from './http-session.js'
import { buildManagementTools, pathOf, type ManagementTool } from './management-tools.js'
import { MANAGEMENT_PROMPTS, renderPrompt } from './management-prompts.js'
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
const SERVER_INFO = { name: 'gatehouse-management', version: '1.0.0' }
const INSTRUCTIONS = 'Operate the Gatehouse API gateway: collections (base paths forwarding to a backend) hold proxies (endpoints); ' +
  'a proxy may run a workflow; clients reach published proxies through access profiles limited by policies. ' +
  'Every tool needs the role its description names. List tools answer {items, next_cursor}. Errors come back as ' +
  '{error: {code, message, details}} with isError true: read details, fix the arguments and retry.'

export interface ManagementMcp {
  /** Handles one HTTP request to the MCP path (any method); always answers. */
  handle (req: IncomingMessage, res: ServerResponse): Promise<void>
  tools (): ManagementTool[]
}

export function createManagementMcp (deps: ManagementMcpDeps): ManagementMcp {
  let cached: ManagementTool[] | null = null
  // Routes are registered after the listener is created (run routes, metrics): build on first use.
  const tools = (): ManagementTool[] => (cached ??= buildManagementTools(deps.router.routes))

  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code: number = ErrorCode.InvalidRequest): void => {
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
    const response = await serveMcpRequest(webRequest(req, raw), {
      // Namespaced: a gateway MCP session (owned by a profile) is never a management one.
      owner: `oidc:${user.sub}`,
      sessions: deps.sessions,
      build: () => sdkServer(caller, req, res),
      stream: true
    })
    await pipe(response, res)
  }

  function sdkServer (caller: Caller, req: IncomingMessage, res: ServerResponse): Server {
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, prompts: {} }, instructions: INSTRUCTIONS })
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools().map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }))
    }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = tools().find(t => t.name === request.params.name)
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${request.params.name}'; tools/list names them.`)
      const token = request.params._meta?.progressToken
      let progress = 0
      const frames: FrameSink | undefined = tool.info.streaming !== true
        ? undefined
        : (event, data) => {
            if (token === undefined) return
            progress++
            extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message: frameMessage(event, data) } }).catch(() => {})
          }
      return await callTool(tool, caller, request.params.arguments ?? {}, req, res, frames)
    })
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: MANAGEMENT_PROMPTS.map(({ render, ...p }) => p) }))
    server.setRequestHandler(GetPromptRequestSchema, async request => renderPrompt(request.params.name, request.params.arguments ?? {}))
    return server
  }

  async function callTool (tool: ManagementTool, caller: Caller, args: Record<string, unknown>, req: IncomingMessage, res: ServerResponse, frames: FrameSink | undefined): Promise<CallToolResult> {
    let ctx: RequestContext | undefined
    let status = 500
    let reply
    let params: Record<string, string> = {}
    try {
      const input = tool.input(args)
      params = input.params
      reply = await invoke(tool.route, caller, input, { req, res, frames, settle: deps.settle }, c => { ctx = c })
      status = reply?.status ?? 200
      const body = reply?.body
      if (body === undefined) return { content: [{ type: 'text', text: `Done (${status}).` }] }
      return {
        content: [{ type: 'text', text: JSON.stringify(body) }],
        ...(typeof body === 'object' && body !== null && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {})
      }
    } catch (err) {
      const unavailable = !(err instanceof AppError) && isDatabaseUnavailable(err)
      const e = unavailable ? serviceUnavailable('The database is unavailable; retry shortly.', 5) : toAppError(err)
      if (!(err instanceof AppError) && !unavailable) deps.logger.error({ err, tool: tool.name }, 'management MCP tool failed')
      status = e.status
      const body = { ...errorBody(e), status: e.status }
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body }
    } finally {
      deps.audit.observe({ req, path: pathOf(tool.route, params), route: tool.route, ctx, status, reply, method: tool.route.method, source: 'mcp' })
    }
  }

  return { handle, tools }
}

const pathOnly = (req: IncomingMessage): string => (req.url ?? '/').split('?')[0]

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

/** One line a human can follow for a streamed frame (node started / finished, captured event). */
function frameMessage (event: string, data: unknown): string {
  const d = data as { node_id?: string, node_name?: string, status?: string } | null
  const who = d?.node_name ?? d?.node_id
  const text = `${event}${who !== undefined ? ` ${who}` : ''}${d?.status !== undefined ? ` (${d.status})` : ''}`
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}
