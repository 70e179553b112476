/**
 * One chat request to the assistant, on either surface: load the caller's thread, settle a pending
 * action (approve, decline, or moved on from), run the turn with tools from the caller's own MCP
 * session, save the thread, and report each step as a Server-Sent Event:
 *
 *   tool_call, tool_result   a tool the assistant ran (read-only tools run at once)
 *   confirmation_required    a change or delete waits: POST again with {confirm: {action_id, approve}}
 *   message                  the assistant's words
 *   error                    the turn stopped ({error: {code, message}}); the thread keeps the user's message
 *   done                     {thread_version}
 */
import { AppError, conflict, errorBody } from '../../common/errors.js'
import type { Logger } from '../logger.js'
import { getThread, saveThread, type ThreadMessage, type ThreadSurface } from '../store/threads.js'
import type { Store } from '../store/types.js'
import { runTurn, type AssistantSettings, type CallRecord, type ChatMessage, type PendingAction, type TurnEvent } from './agent.js'
import type { McpToolBox } from './mcp-toolbox.js'

export interface ChatInput { message?: string, confirm?: { action_id: string, approve: boolean } }

/** The request body, for both surfaces. */
export const chatBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 20000 },
    confirm: {
      type: 'object',
      additionalProperties: false,
      required: ['action_id', 'approve'],
      properties: { action_id: { type: 'string', minLength: 1, maxLength: 100 }, approve: { type: 'boolean' } }
    }
  }
}

const KEEP_MESSAGES = 200
const KEEP_BYTES = 900 * 1024

export interface ChatOptions {
  store: Store
  surface: ThreadSurface
  /** Whose thread: the OIDC sub, or profile:<id> on the developer portal. */
  owner: string
  settings: AssistantSettings
  system: string
  openBox: () => Promise<McpToolBox>
  logger: Logger
  /** Told of every tool call decided (the audit trail). */
  record: (c: CallRecord) => void
  signal: AbortSignal
  send: (event: string, data: unknown) => void
}

/** Drops the oldest exchanges (never splitting a tool call from its results) to fit the thread limits. */
function trimmed (messages: ChatMessage[]): ChatMessage[] {
  let out = messages
  const size = (m: ChatMessage[]) => Buffer.byteLength(JSON.stringify(m))
  while (out.length > 1 && (out.length > KEEP_MESSAGES || size(out) > KEEP_BYTES)) {
    const nextUser = out.findIndex((m, i) => i > 0 && m.role === 'user')
    out = nextUser === -1 ? out.slice(-1) : out.slice(nextUser)
  }
  return out
}

/** Checks the input against the saved thread before anything streams (a stale confirmation is a 409). */
export async function prepareChat (store: Store, surface: ThreadSurface, owner: string, input: ChatInput) {
  const thread = await getThread(store, surface, owner)
  const pending = thread.metadata.pending as PendingAction | undefined
  if (input.confirm !== undefined && (pending === undefined || pending.action_id !== input.confirm.action_id)) {
    throw conflict('No action with this action_id is waiting for confirmation; it was already decided or replaced by a newer message.')
  }
  return { thread, pending }
}

export async function runChat (o: ChatOptions, input: ChatInput, prepared: Awaited<ReturnType<typeof prepareChat>>): Promise<void> {
  const { thread, pending } = prepared
  const messages: ChatMessage[] = [{ role: 'system', content: o.system }, ...(thread.messages as unknown as ChatMessage[])]
  let decision: { pending: PendingAction, approve: boolean } | undefined
  if (pending !== undefined && input.confirm !== undefined) decision = { pending, approve: input.confirm.approve }
  else if (pending !== undefined) {
    // A new message instead of a decision: the waiting calls are answered as not run.
    for (const c of pending.remaining) messages.push({ role: 'tool', tool_call_id: c.id, content: 'Not run: the user sent a new message instead of approving.' })
  }
  if (input.message !== undefined) messages.push({ role: 'user', content: input.message })

  let next: PendingAction | null = null
  let failure: AppError | null = null
  let box: McpToolBox | null = null
  try {
    box = await o.openBox()
    next = await runTurn({ settings: o.settings, box, messages, decision, emit: (e: TurnEvent) => { o.send(e.event, e.data) }, record: o.record, signal: o.signal })
  } catch (err) {
    failure = err instanceof AppError ? err : new AppError(502, 'bad_gateway', `The assistant stopped: ${(err as Error).message}`)
    if (!(err instanceof AppError)) o.logger.warn({ err }, 'assistant turn failed')
  } finally {
    await box?.close()
  }

  const metadata: Record<string, unknown> = { ...thread.metadata }
  delete metadata.pending
  if (next !== null) metadata.pending = next
  else if (failure !== null && pending !== undefined && !pending.remaining.every(c => messages.some(m => m.role === 'tool' && m.tool_call_id === c.id))) {
    // The turn stopped before the waiting calls were settled: they still wait.
    metadata.pending = pending
  }
  const firstUser = messages.find(m => m.role === 'user')
  try {
    const saved = await saveThread(o.store, o.surface, o.owner, {
      title: thread.title ?? (firstUser === undefined ? null : firstUser.content.slice(0, 80)),
      messages: trimmed(messages.slice(1)) as unknown as ThreadMessage[],
      metadata
    }, thread.version)
    if (failure !== null) o.send('error', errorBody(failure))
    else if (next !== null) o.send('confirmation_required', { action_id: next.action_id, tool: next.tool, arguments: next.arguments, description: next.description })
    o.send('done', { thread_version: saved.version })
  } catch (err) {
    const e = err instanceof AppError ? err : new AppError(503, 'service_unavailable', 'The conversation could not be saved; retry shortly.')
    o.send('error', errorBody(e))
  }
}

/** Server-Sent Event framing of one event. */
export const sseFrame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
