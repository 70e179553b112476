/**
 * The management assistant's chat turn, as an operation in two steps: `startManagementChatOp`
 * checks everything that can fail as a coded error (assistant configured, input against the saved
 * thread) before anything streams; the stream it returns then runs the turn, handing each frame
 * to a sink (the route writes them as Server-Sent Events, src/main/assistant/routes.ts).
 */
import { isConfigured, notConfigured, type AssistantSettings } from '../assistant/agent.js'
import { auditToolCalls } from '../assistant/audit.js'
import { prepareChat, runChat, type ChatInput } from '../assistant/chat.js'
import { confirmUnlessReadOnly, openMcpToolBox } from '../assistant/mcp-toolbox.js'
import { UNTRUSTED_RULE } from '../assistant/tool-results.js'
import type { Logger } from '../logger.js'
import type { AuditTrail } from '../management/audit-trail.js'
import type { Store } from '../store/types.js'
import type { Caller } from './types.js'

export const MANAGEMENT_CHAT_PATH = '/api/v1/copilot/chat'

const MANAGEMENT_SYSTEM = 'You are the assistant of Gatehouse, an API gateway. You operate it for the signed-in user through the tools, which are its management API: collections of proxies routed to backends, workflows, policies, clients and access profiles, credentials, audit and request logs, metrics. Read before you change; say what you are about to change. Changes, deletions and reads of secrets are shown to the user for approval before they run. If a tool answers forbidden, the user\'s role does not allow it: say so plainly. Answer briefly. ' + UNTRUSTED_RULE

export interface ManagementChatDeps {
  store: Store
  logger: Logger
  settings: AssistantSettings
  /** The management MCP's URL on loopback (known once the listener listens). */
  mcpUrl: () => string
  audit: AuditTrail
}

/** A chat turn ready to run: each frame (event, data) goes to `send`; `signal` stops it (the client left). */
export interface ChatStream {
  run: (send: (event: string, data: unknown) => void, signal: AbortSignal) => Promise<void>
}

export interface ManagementChatInput {
  chat: ChatInput
  /** The caller's own Authorization header: the management MCP checks their role on every tool call. */
  authorization: string
  /** Where the request came from, for the audit rows of the tool calls. */
  remoteAddr: string | null
}

/** The caller's thread (per OIDC sub), checked against the input; throws coded errors before anything streams. */
export async function startManagementChatOp (deps: ManagementChatDeps, caller: Caller, input: ManagementChatInput): Promise<ChatStream> {
  if (!isConfigured(deps.settings)) throw notConfigured()
  const owner = caller.sub
  const prepared = await prepareChat(deps.store, 'management', owner, input.chat)
  return {
    run: async (send, signal) => {
      await runChat({
        store: deps.store,
        surface: 'management',
        owner,
        settings: deps.settings,
        system: MANAGEMENT_SYSTEM,
        openBox: async () => await openMcpToolBox(deps.mcpUrl(), { authorization: input.authorization }, confirmUnlessReadOnly),
        logger: deps.logger,
        record: auditToolCalls(deps.audit, { actor: owner, path: MANAGEMENT_CHAT_PATH, remoteAddr: input.remoteAddr }),
        signal,
        send
      }, input.chat, prepared)
    }
  }
}
