/**
 * GET /api/v1/events/stream on node:http: one subscription per response.
 *
 *   hub ─▶ subscription (bounded) ─next─▶ res.write ─false─▶ wait for 'drain'
 *                                                   (meanwhile new events queue in the
 *                                                    subscription; past its bound the
 *                                                    client is cut off)
 *
 * Frames: `id:` + one `data:` line of JSON per event; `id:` alone for the
 * starting position (sets the client's Last-Event-ID without an event);
 * `event: resync` when missed events cannot be replayed; `: ping` comments.
 */
import type http from 'node:http'
import { AppError, serviceUnavailable, tooManyRequests } from '../../common/errors.js'
import type { EventHub } from './hub.js'
import type { StreamItem } from './subscription.js'

export interface EventStreamOptions {
  /** Milliseconds between `: ping` comments; default 15000 (config SSE_PING_INTERVAL_MS). */
  pingIntervalMs?: number
  /** When the caller's token expires (epoch ms): the stream ends then with `event: token_expired`. */
  expiresAt?: number
}

/** Caps on open streams, per instance and per user; a refused stream gets 503 or 429 with Retry-After. */
export class StreamLimits {
  #total = 0
  readonly #byUser = new Map<string, number>()
  constructor (private readonly max: number, private readonly perUser: number) {}

  /** Takes a slot for the user, or says why not. The release function gives it back (once). */
  acquire (sub: string): { release: () => void } | AppError {
    if (this.#total >= this.max) return serviceUnavailable(`This instance already serves ${this.max} event streams (SSE_MAX_STREAMS); retry shortly or connect to another instance.`, 5)
    const mine = this.#byUser.get(sub) ?? 0
    if (mine >= this.perUser) return tooManyRequests(30, `You already have ${this.perUser} event streams open on this instance (SSE_MAX_STREAMS_PER_USER); close one first.`)
    this.#total++
    this.#byUser.set(sub, mine + 1)
    let released = false
    return {
      release: () => {
        if (released) return
        released = true
        this.#total--
        const n = (this.#byUser.get(sub) ?? 1) - 1
        if (n <= 0) this.#byUser.delete(sub)
        else this.#byUser.set(sub, n)
      }
    }
  }
}

const RESYNC_DATA = JSON.stringify({ schema_version: 1, reason: 'missed_events_unavailable' })

// One event goes to every stream: its frame is encoded once, and each stream writes the same bytes.
const encoded = new WeakMap<StreamItem, Buffer>()
function frameBytes (item: StreamItem): Buffer {
  let b = encoded.get(item)
  if (b === undefined) { b = Buffer.from(sseFrame(item)); encoded.set(item, b) }
  return b
}

export function sseFrame (item: StreamItem): string {
  switch (item.type) {
    case 'event': return `id: ${item.id}\ndata: ${item.data}\n\n`
    case 'resync': return `id: ${item.id}\nevent: resync\ndata: ${RESYNC_DATA}\n\n`
    case 'position': return `id: ${item.id}\n\n`
  }
}

function lastEventId (req: http.IncomingMessage): string | undefined {
  const header = req.headers['last-event-id']
  if (typeof header === 'string' && header !== '') return header.trim()
  const q = (req.url ?? '').indexOf('?')
  if (q < 0) return undefined
  return new URLSearchParams(req.url!.slice(q + 1)).get('last_event_id') ?? undefined
}

/**
 * Streams the hub's events until the client leaves, a write fails, the
 * subscriber is cut off or the hub closes. Resolves when the stream is over.
 * Authentication (viewer and above) is the router's job.
 */
export async function handleEventStream (req: http.IncomingMessage, res: http.ServerResponse, hub: Pick<EventHub, 'subscribe'>, opts: EventStreamOptions = {}): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    connection: 'keep-alive'
  })
  res.flushHeaders()
  // Nagle would hold small frames back; events are change hints a UI waits for.
  req.socket.setNoDelay(true)
  const sub = hub.subscribe({ lastEventId: lastEventId(req) })
  let finished = false
  let draining = false
  const finish = () => {
    if (finished) return
    finished = true
    clearInterval(ping)
    if (expiry !== null) clearTimeout(expiry)
    sub.close()
    if (!res.destroyed) res.end()
  }
  const write = (chunk: string | Buffer): boolean => {
    if (finished) return true
    try {
      return res.write(chunk, err => { if (err != null) finish() })
    } catch {
      finish()
      return true
    }
  }
  const ping = setInterval(() => { if (!draining) write(': ping\n\n') }, opts.pingIntervalMs ?? 15_000)
  ping.unref()
  // A stream lives no longer than the token that opened it: the client signs in again and reconnects.
  const expiry = opts.expiresAt === undefined ? null : setTimeout(() => { write('event: token_expired\ndata: {"reason":"token_expired"}\n\n'); finish() }, Math.max(0, Math.min(opts.expiresAt - Date.now(), 2 ** 31 - 1)))
  expiry?.unref()
  res.on('close', finish)
  res.on('error', finish)
  // A client too slow to drain its buffer is dropped: it reconnects and replays.
  sub.onEnd(reason => { if (reason === 'overflow') res.destroy(); else finish() })

  for (let item = await sub.next(); item !== undefined && !finished; item = await sub.next()) {
    if (write(frameBytes(item))) continue
    draining = true
    await new Promise<void>(resolve => {
      const wake = () => { res.off('drain', wake); res.off('close', wake); resolve() }
      res.on('drain', wake)
      res.on('close', wake)
    })
    draining = false
  }
  finish()
}
