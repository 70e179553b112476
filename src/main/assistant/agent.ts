/**
 * The assistant's turn: the conversation goes to an OpenAI-compatible chat-completions endpoint
 * with the MCP tools offered as functions; each tool call the model makes runs through the MCP
 * server as the signed-in caller, and its result goes back to the model, until the model answers
 * in words (or ASSISTANT_MAX_STEPS model calls are spent).
 *
 *   user message ─▶ model ─▶ tool calls? ─┬─ read-only ──────────▶ run through MCP ─▶ model …
 *                                         └─ changes or deletes ─▶ stop: a pending action the
 *                                            user approves or declines (POST … confirm) ─▶ …
 *
 * A tool whose answer holds secret material waits for approval like a change, and the secret goes
 * to the user only (tool-results.ts); every result reaches the model marked as untrusted data.
 * The conversation (OpenAI message shapes) is the saved thread; a pending action lives in the
 * thread's metadata, so it survives a restart and any instance can resume it.
 */
import { randomUUID } from 'node:crypto'
import { AppError } from '../../common/errors.js'
import { maskCredentials } from '../../common/mask-credentials.js'
import { asUntrusted, redactSecrets } from './tool-results.js'

export interface AssistantSettings { baseUrl: string, apiKey: string, model: string, maxSteps: number }

/** A tool as the model sees it, and whether running it needs the user's approval. */
export interface ToolSpec {
  name: string
  description: string
  parameters: Record<string, unknown>
  confirm: (args: Record<string, unknown>) => boolean
  /** Answer fields holding secret material: shown to the user, replaced before the model reads the result. */
  secretFields: readonly string[]
}

export interface ToolBox {
  tools: ToolSpec[]
  call (name: string, args: Record<string, unknown>): Promise<{ text: string, isError: boolean }>
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  tool_calls?: ToolCall[]
  tool_call_id?: string
  name?: string
}

export interface ToolCall { id: string, type: 'function', function: { name: string, arguments: string } }

/** A tool call waiting for the user's decision, with the calls of the same model answer after it. */
export interface PendingAction {
  action_id: string
  tool: string
  arguments: Record<string, unknown>
  description: string
  remaining: ToolCall[]
}

/** What the turn reports as it goes (streamed to the client as Server-Sent Events). */
export type TurnEvent =
  | { event: 'tool_call', data: { id: string, tool: string, arguments: Record<string, unknown> } }
  | { event: 'tool_result', data: { id: string, tool: string, is_error: boolean, content: string, secret?: true } }
  | { event: 'confirmation_required', data: { action_id: string, tool: string, arguments: Record<string, unknown>, description: string } }
  | { event: 'message', data: { content: string } }

/** How a tool call ended, for the audit trail: run at once, run after approval, or declined. */
export type CallOutcome = 'tool_call' | 'tool_call_approved' | 'tool_call_declined'
export interface CallRecord { tool: string, args: Record<string, unknown>, outcome: CallOutcome, isError: boolean, text: string }

const RESULT_CHARS_TO_MODEL = 24_000
const RESULT_CHARS_TO_CLIENT = 4_000

export const notConfigured = (): AppError => new AppError(503, 'service_unavailable',
  'The assistant is not configured: set ASSISTANT_BASE_URL (an OpenAI-compatible API such as https://api.openai.com/v1), ASSISTANT_MODEL and, when the API needs one, ASSISTANT_API_KEY, then restart.')

export const isConfigured = (s: AssistantSettings): boolean => s.baseUrl !== '' && s.model !== ''

function parseArgs (raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {}
  try {
    const v = JSON.parse(raw)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : { value: v }
  } catch { return { _unparsed: raw } }
}

/** One chat-completions call. Errors of the model's API are 502s that say what it answered. */
async function complete (s: AssistantSettings, messages: ChatMessage[], tools: ToolSpec[], signal: AbortSignal): Promise<ChatMessage> {
  let res: Response
  try {
    res = await fetch(`${s.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(s.apiKey !== '' ? { authorization: `Bearer ${s.apiKey}` } : {}) },
      body: JSON.stringify({
        model: s.model,
        messages,
        tools: tools.map(t => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })),
        tool_choice: 'auto'
      }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(120_000)])
    })
  } catch (err) {
    throw new AppError(502, 'bad_gateway', `The assistant's model API at ${maskCredentials(s.baseUrl)} could not be reached: ${maskCredentials((err as Error).message)}.`)
  }
  const text = await res.text()
  if (!res.ok) throw new AppError(502, 'bad_gateway', `The assistant's model API answered ${res.status}: ${text.slice(0, 300)}`)
  let body: any
  try { body = JSON.parse(text) } catch { throw new AppError(502, 'bad_gateway', 'The assistant\'s model API answered something other than JSON.') }
  const m = body?.choices?.[0]?.message
  if (typeof m !== 'object' || m === null) throw new AppError(502, 'bad_gateway', 'The assistant\'s model API answered without a message.')
  const out: ChatMessage = { role: 'assistant', content: typeof m.content === 'string' ? m.content : '' }
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((c: any): ToolCall => ({
      id: typeof c.id === 'string' && c.id !== '' ? c.id : `call_${randomUUID()}`,
      type: 'function',
      function: { name: String(c.function?.name ?? ''), arguments: typeof c.function?.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function?.arguments ?? {}) }
    }))
  }
  return out
}

export interface TurnInput {
  settings: AssistantSettings
  box: ToolBox
  /** The conversation so far; the turn appends to it. */
  messages: ChatMessage[]
  /** Set when the user answers a pending action. */
  decision?: { pending: PendingAction, approve: boolean }
  emit: (e: TurnEvent) => void
  /** Told of every tool call decided (run or declined). */
  record: (c: CallRecord) => void
  signal: AbortSignal
}

const SECRET_NOTE = ' Its answer holds secret material: you will see it; the assistant will not.'

/** Runs tool calls in order; stops at the first that needs approval and returns it as pending. */
async function runCalls (calls: ToolCall[], t: TurnInput, approved: string | null): Promise<PendingAction | null> {
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]! // i < calls.length
    const spec = t.box.tools.find(x => x.name === c.function.name)
    const args = parseArgs(c.function.arguments)
    let result: { text: string, isError: boolean }
    if (spec === undefined) {
      result = { text: `There is no tool named '${c.function.name}'.`, isError: true }
    } else if (spec.confirm(args) && c.id !== approved) {
      const description = spec.description.split(/(?<=\.)\s/)[0] + (spec.secretFields.length > 0 ? SECRET_NOTE : '')
      return { action_id: randomUUID(), tool: spec.name, arguments: args, description, remaining: calls.slice(i) }
    } else {
      t.emit({ event: 'tool_call', data: { id: c.id, tool: spec.name, arguments: args } })
      result = await t.box.call(spec.name, args)
      t.record({ tool: spec.name, args, outcome: c.id === approved ? 'tool_call_approved' : 'tool_call', isError: result.isError, text: result.text })
    }
    const forModel = redactSecrets(result.text, spec?.secretFields ?? [])
    t.emit({ event: 'tool_result', data: { id: c.id, tool: c.function.name, is_error: result.isError, content: result.text.slice(0, RESULT_CHARS_TO_CLIENT), ...(forModel.redacted ? { secret: true as const } : {}) } })
    t.messages.push({ role: 'tool', tool_call_id: c.id, content: spec === undefined ? result.text : asUntrusted(spec.name, forModel.text.slice(0, RESULT_CHARS_TO_MODEL)) })
  }
  return null
}

/** One turn; resolves to the pending action it stopped at, or null when the model answered. */
export async function runTurn (t: TurnInput): Promise<PendingAction | null> {
  if (t.decision !== undefined) {
    const { pending, approve } = t.decision
    const [first, ...rest] = pending.remaining
    // A pending action is made with the call it stopped at first (runCalls: calls.slice(i)).
    if (first === undefined) throw new Error('The pending action holds no tool call to resume.')
    if (!approve) {
      t.record({ tool: pending.tool, args: pending.arguments, outcome: 'tool_call_declined', isError: false, text: '' })
      t.emit({ event: 'tool_result', data: { id: first.id, tool: pending.tool, is_error: true, content: 'Declined by the user.' } })
      t.messages.push({ role: 'tool', tool_call_id: first.id, content: 'The user declined this action; it was not run. Ask what they want instead.' })
      const next = await runCalls(rest, t, null)
      if (next !== null) return next
    } else {
      const next = await runCalls([first, ...rest], t, first.id)
      if (next !== null) return next
    }
  }
  for (let step = 0; step < t.settings.maxSteps; step++) {
    const answer = await complete(t.settings, t.messages, t.box.tools, t.signal)
    t.messages.push(answer)
    if (answer.content !== '') t.emit({ event: 'message', data: { content: answer.content } })
    if (answer.tool_calls === undefined) return null
    const pending = await runCalls(answer.tool_calls, t, null)
    if (pending !== null) return pending
  }
  const note = `I stopped after ${t.settings.maxSteps} steps without finishing; tell me how to go on.`
  t.messages.push({ role: 'assistant', content: note })
  t.emit({ event: 'message', data: { content: note } })
  return null
}
