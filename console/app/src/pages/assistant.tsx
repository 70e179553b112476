/**
 * The assistant panel: a chat with the built-in assistant (POST /copilot/chat, streamed), which
 * acts through the management MCP with the signed-in user's own token. Changes wait for an
 * Approve or Decline here. When the server has no assistant model configured, the panel says how
 * to configure one.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { ApiError, get, readStream } from '../api'

interface Line { kind: 'user' | 'assistant' | 'tool' | 'error' | 'secret', text: string }
interface Waiting { action_id: string, tool: string, arguments: unknown, description: string }
interface SavedMessage { role: string, content: unknown, tool_calls?: Array<{ function: { name: string } }> }

function fromThread (messages: SavedMessage[]): Line[] {
  const out: Line[] = []
  for (const m of messages) {
    if (m.role === 'user' && typeof m.content === 'string') out.push({ kind: 'user', text: m.content })
    else if (m.role === 'assistant') {
      if (typeof m.content === 'string' && m.content !== '') out.push({ kind: 'assistant', text: m.content })
      for (const c of m.tool_calls ?? []) out.push({ kind: 'tool', text: `→ ${c.function.name}` })
    }
  }
  return out
}

export function AssistantPanel ({ onClose }: { onClose: () => void }) {
  const qc = useQueryClient()
  const thread = useQuery({ queryKey: ['assistant-thread'], queryFn: async () => await get<{ messages?: SavedMessage[], metadata?: { pending?: Waiting } }>('/copilot/thread'), retry: false })
  const [lines, setLines] = useState<Line[] | null>(null)
  const [waiting, setWaiting] = useState<Waiting | null>(null)
  const [busy, setBusy] = useState(false)
  const config = useQuery({ queryKey: ['auth-config'], queryFn: async () => await (await fetch('/api/v1/auth/config')).json() as { assistant?: boolean } })
  const [failed, setUnconfigured] = useState<string | null>(null)
  const unconfigured = failed ?? (config.data?.assistant === false ? 'Set ASSISTANT_BASE_URL (an OpenAI-compatible API), ASSISTANT_MODEL and, if needed, ASSISTANT_API_KEY on the server, then restart it.' : null)
  const [text, setText] = useState('')
  const shown = lines ?? fromThread(thread.data?.messages ?? [])
  const pending = waiting ?? (lines === null ? thread.data?.metadata?.pending ?? null : null)

  const send = async (body: unknown, echo?: string) => {
    const next = [...shown, ...(echo !== undefined ? [{ kind: 'user' as const, text: echo }] : [])]
    setLines(next)
    setWaiting(null)
    setBusy(true)
    const add = (l: Line) => { next.push(l); setLines([...next]) }
    try {
      await readStream('POST', '/copilot/chat', body, (event, data) => {
        if (event === 'message') add({ kind: 'assistant', text: data.content })
        else if (event === 'tool_call') add({ kind: 'tool', text: `→ ${data.tool as string}` })
        else if (event === 'tool_result') {
          add({ kind: data.is_error === true ? 'error' : 'tool', text: `${data.is_error === true ? '✗' : '✓'} ${data.tool as string}${data.is_error === true ? `: ${String(data.content).slice(0, 200)}` : ''}` })
          // Secret material is for the user's eyes: shown here once, never sent to the model nor kept in the thread.
          if (data.secret === true) add({ kind: 'secret', text: String(data.content) })
        }
        else if (event === 'confirmation_required') setWaiting(data)
        else if (event === 'error') add({ kind: 'error', text: data.error?.message ?? 'The assistant stopped.' })
      })
    } catch (err) {
      if (err instanceof ApiError && err.status === 503 && /ASSISTANT_/.test(err.message)) setUnconfigured(err.message)
      else add({ kind: 'error', text: (err as Error).message })
    } finally {
      setBusy(false)
      void qc.invalidateQueries({ queryKey: ['assistant-thread'] })
    }
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    const m = text.trim()
    if (m === '' || busy) return
    setText('')
    void send({ message: m }, m)
  }

  return (
    <aside className='assistant' aria-label='Assistant'>
      <header><h2>Assistant</h2><button type='button' className='ghost' aria-label='Close assistant' onClick={onClose}>×</button></header>
      {unconfigured !== null
        ? (
          <>
            <p>The built-in assistant is not configured on this server.</p>
            <p className='muted'>{unconfigured}</p>
            <p>It acts through the management MCP (<code>/api/v1/mcp</code>) with your own token, so it can do exactly what your role allows.</p>
          </>
          )
        : (
          <>
            <ol className='chat' aria-label='Conversation'>
              {shown.map((l, i) => l.kind === 'secret'
                ? <li key={i} className='chat-tool'><p className='muted'>Shown to you only (the assistant sees a placeholder):</p><pre>{l.text}</pre></li>
                : <li key={i} className={`chat-${l.kind}`}>{l.text}</li>)}
              {busy && <li className='muted'>…</li>}
            </ol>
            {pending !== null && (
              <div className='confirm' role='alertdialog' aria-label='Confirm action'>
                <p><strong>{pending.tool}</strong>: {pending.description}</p>
                <pre>{JSON.stringify(pending.arguments, null, 2)}</pre>
                <button type='button' disabled={busy} onClick={() => { void send({ confirm: { action_id: pending.action_id, approve: true } }) }}>Approve</button>{' '}
                <button type='button' className='ghost' disabled={busy} onClick={() => { void send({ confirm: { action_id: pending.action_id, approve: false } }) }}>Decline</button>
              </div>
            )}
            <form onSubmit={submit}>
              <textarea aria-label='Message' rows={3} value={text} onChange={e => setText(e.target.value)} placeholder='Ask about or change your gateway…' />
              <button type='submit' disabled={busy || text.trim() === ''}>Send</button>
            </form>
          </>
          )}
    </aside>
  )
}
