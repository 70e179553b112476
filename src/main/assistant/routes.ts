/**
 * The assistant's two chat routes:
 *   POST /api/v1/copilot/chat        (management listener) tools of the management MCP, with the
 *                                     signed-in user's own bearer token; thread per OIDC sub
 *   POST /portal/api/assistant/chat  (gateway listener) tools of the gateway MCP, with the
 *                                     developer's profile credentials; thread per profile
 * Both answer Server-Sent Events (see chat.ts); the saved threads are the ones of
 * /api/v1/copilot/thread and the developer portal's. The management chat turn is an operation
 * (src/main/operations/assistant.ts); its route only writes the frames.
 */
import { AppError, errorBody } from '../../common/errors.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { Router } from '../management/router.js'
import type { GatewayMcp } from '../mcp/gateway-mcp.js'
import type { McpPeer } from '../gateway/mcp-route.js'
import type { Store } from '../store/types.js'
import { ajv, compileOnFirstUse, validateWith } from '../validation/ajv.js'
import { isConfigured, notConfigured, type AssistantSettings } from './agent.js'
import { chatBodySchema, prepareChat, runChat, sseFrame, type ChatInput } from './chat.js'
import { auditToolCalls } from './audit.js'
import { openMcpToolBox, type ConfirmRule } from './mcp-toolbox.js'
import { UNTRUSTED_RULE } from './tool-results.js'
import type { AuditTrail } from '../management/audit-trail.js'
import { callerOf } from '../management/operation-routes.js'
import { MANAGEMENT_CHAT_PATH, startManagementChatOp } from '../operations/assistant.js'

export const PORTAL_ASSISTANT_PATH = '/portal/api/assistant/chat'

const validateChatBody = compileOnFirstUse(ajv, chatBodySchema)

const PORTAL_SYSTEM = 'You are the developer portal assistant of an API gateway. You help a developer discover and call the APIs their access profile may use, through the tools: list_collections, list_endpoints, endpoint_details, execute_endpoint. Calls other than GET are shown to the developer for approval before they run. Answer briefly and show the relevant part of API answers. ' + UNTRUSTED_RULE

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }

export function assistantSettings (config: Readonly<Config>): AssistantSettings {
  return { baseUrl: config.ASSISTANT_BASE_URL, apiKey: config.ASSISTANT_API_KEY, model: config.ASSISTANT_MODEL, maxSteps: config.ASSISTANT_MAX_STEPS }
}

export interface ManagementAssistantDeps {
  config: Readonly<Config>
  store: Store
  logger: Logger
  /** The management MCP's URL on loopback (known once the listener listens). */
  mcpUrl: () => string
  audit: AuditTrail
}

export function registerAssistantRoutes (router: Router, deps: ManagementAssistantDeps): void {
  const chatDeps = { store: deps.store, logger: deps.logger, settings: assistantSettings(deps.config), mcpUrl: deps.mcpUrl, audit: deps.audit }
  // Streams its answer: the handler writes the response itself, once the turn is ready to run.
  router.add('POST', MANAGEMENT_CHAT_PATH, async ctx => {
    const chat = await startManagementChatOp(chatDeps, callerOf(ctx), {
      chat: ctx.body as ChatInput,
      authorization: String(ctx.req.headers.authorization),
      remoteAddr: ctx.req.socket.remoteAddress ?? null
    })
    const res = ctx.res
    const abort = new AbortController()
    res.on('close', () => { abort.abort() })
    res.writeHead(200, SSE_HEADERS)
    await chat.run((event, data) => { if (!res.writableEnded) res.write(sseFrame(event, data)) }, abort.signal)
    res.end()
    return undefined
  }, { role: 'viewer', body: chatBodySchema })
}

/** Only calls that change something wait for the developer: execute_endpoint with a method other than GET. */
const confirmPortalCall: ConfirmRule = (tool, args) =>
  tool.name === 'execute_endpoint' && typeof args.method === 'string' && args.method.toUpperCase() !== 'GET'

export interface PortalAssistantDeps {
  config: Readonly<Config>
  store: Store
  logger: Logger
  /** The gateway MCP's own check of the caller's profile. */
  authenticate: GatewayMcp['authenticate']
  /** The management audit trail (created after the gateway listener). */
  audit: () => AuditTrail
}

/** The developer-portal chat, as a handler of web Requests on the gateway listener. */
export function createPortalAssistant (deps: PortalAssistantDeps): (req: Request, peer: McpPeer) => Promise<Response> {
  const settings = assistantSettings(deps.config)
  const json = (err: AppError, rid: string) => new Response(JSON.stringify(errorBody(err, { request_id: rid })), {
    status: err.status, headers: { 'content-type': 'application/json', 'x-request-id': rid, ...err.headers }
  })
  return async (req, peer) => {
    const rid = peer.requestId
    if (req.method !== 'POST') return json(new AppError(405, 'method_not_allowed', 'Use POST.', undefined, { allow: 'POST' }), rid)
    if (!isConfigured(settings)) return json(notConfigured(), rid)
    let input: ChatInput
    try { input = await req.json() as ChatInput } catch { return json(new AppError(400, 'invalid_json', 'The request body is not valid JSON.'), rid) }
    try { validateWith(validateChatBody, input) } catch (err) { return json(err as AppError, rid) }
    // The profile is checked as a gateway call would be before its thread is touched.
    const who = await deps.authenticate(req.headers, peer)
    if (who instanceof AppError) return json(who, rid)
    const credentials: Record<string, string> = { [peer.self.hop[0]]: peer.self.hop[1] }
    for (const h of ['authorization', 'x-client-id', 'x-profile-id']) { const v = req.headers.get(h); if (v !== null) credentials[h] = v }
    const owner = `profile:${who.profile_id}`
    let box
    try {
      box = await openMcpToolBox(`${peer.self.origin}/mcp`, credentials, confirmPortalCall)
    } catch (err) {
      return json(new AppError(502, 'bad_gateway', `The gateway MCP could not be opened: ${(err as Error).message}`), rid)
    }
    let prepared
    try { prepared = await prepareChat(deps.store, 'developer_portal', owner, input) } catch (err) {
      await box.close()
      return json(err instanceof AppError ? err : new AppError(503, 'service_unavailable', 'The conversation could not be read; retry shortly.'), rid)
    }
    const abort = new AbortController()
    const opened = box
    const body = new ReadableStream<Uint8Array>({
      async start (controller) {
        const enc = new TextEncoder()
        await runChat({
          store: deps.store, surface: 'developer_portal', owner, settings, system: PORTAL_SYSTEM,
          openBox: async () => opened, logger: deps.logger, signal: abort.signal,
          record: auditToolCalls(deps.audit(), { actor: owner, path: PORTAL_ASSISTANT_PATH, remoteAddr: peer.remoteIp }),
          send: (event, data) => { try { controller.enqueue(enc.encode(sseFrame(event, data))) } catch {} }
        }, input, prepared)
        controller.close()
      },
      cancel () { abort.abort() }
    })
    return new Response(body, { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': rid } })
  }
}
