/** An SSE client for tests: reads frames from a fetch response the way an EventSource parses them. */
import { PATIENCE_MS } from './wait.js'

interface T { teardown (fn: () => unknown): void }

export interface Frame { id?: string, event?: string, data: string[], comment: string[] }

export interface SseReader {
  /** The next frame (comments included), or undefined when the stream ends or `timeoutMs` passes. */
  next (timeoutMs?: number): Promise<Frame | undefined>
  /** The next frame carrying data (skips pings and other comments). */
  nextData (timeoutMs?: number): Promise<Frame | undefined>
  cancel (): Promise<void>
}

export function reader (res: Response): SseReader {
  const body = res.body!.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  const frames: Frame[] = []
  // A read that outlives a timed-out call is kept for the next call, so no chunk is lost.
  let pending: ReturnType<typeof body.read> | undefined
  const next = async (timeoutMs = PATIENCE_MS): Promise<Frame | undefined> => {
    const deadline = Date.now() + timeoutMs
    while (frames.length === 0) {
      const end = buf.indexOf('\n\n')
      if (end >= 0) {
        const frame: Frame = { data: [], comment: [] }
        for (const line of buf.slice(0, end).split('\n')) {
          if (line.startsWith(':')) frame.comment.push(line.slice(1).trim())
          else if (line.startsWith('id: ')) frame.id = line.slice(4)
          else if (line.startsWith('event: ')) frame.event = line.slice(7)
          else if (line.startsWith('data: ')) frame.data.push(line.slice(6))
        }
        buf = buf.slice(end + 2)
        frames.push(frame)
        break
      }
      let timer: NodeJS.Timeout | undefined
      pending ??= body.read()
      const r = await Promise.race([pending, new Promise<'timeout'>(resolve => { timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now())) })])
      clearTimeout(timer)
      if (r === 'timeout') return undefined
      pending = undefined
      if (r.done) return undefined
      buf += decoder.decode(r.value, { stream: true })
    }
    return frames.shift()
  }
  return {
    next,
    async nextData (timeoutMs = PATIENCE_MS) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const f = await next(Math.max(0, deadline - Date.now()))
        if (f === undefined || f.data.length > 0) return f
      }
    },
    cancel: async () => { await body.cancel().catch(() => {}) }
  }
}

/** Opens an event stream; aborted in teardown. */
export async function openStream (t: T, url: string, headers: Record<string, string> = {}): Promise<{ res: Response, r: SseReader, abort: () => void }> {
  const ac = new AbortController()
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal })
  const r = reader(res)
  t.teardown(() => { ac.abort() })
  return { res, r, abort: () => ac.abort() }
}
