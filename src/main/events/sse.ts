/**
 * GET /api/v1/events/stream on node:http: one subscription per response.
 *
 *   hub ─push─▶ subscription (bounded) ─sink─▶ socket.write(framed bytes) ─false─▶ wait for 'drain'
 *                                                  (meanwhile new events queue in the
 *                                                   subscription; past its bound the
 *                                                   client is cut off)
 *
 * Frames: `id:` + one `data:` line of JSON per event; `id:` alone for the
 * starting position (sets the client's Last-Event-ID without an event);
 * `event: resync` when missed events cannot be replayed; `: ping` comments.
 *
 * An event goes to many streams, so its bytes are made once per framing and
 * shared: with HTTP/1.1 (chunked transfer coding) the chunk's size line, the
 * frame and the closing CRLF in one Buffer; with HTTP/1.0 (no chunking, the
 * body ends with the connection) the frame alone. Each stream writes that
 * Buffer straight to its socket once the head is out: one write, no
 * per-write callback, no promise per event. The bytes on the wire are the
 * ones `res.write` would send; `res.end()` still writes the last chunk.
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

/** A frame's bytes: `chunked` as one HTTP/1.1 chunk (size line, frame, CRLF), `raw` as is. */
interface FrameBytes { chunked?: Buffer, raw?: Buffer }

/** The bytes of `frame`, framed for the stream's transfer coding. */
export function frameBuffer (frame: string, chunked: boolean): Buffer {
  if (!chunked) return Buffer.from(frame)
  const body = Buffer.from(frame)
  const size = `${body.length.toString(16)}\r\n`
  const out = Buffer.allocUnsafe(size.length + body.length + 2)
  out.write(size, 0, 'latin1')
  body.copy(out, size.length)
  out.write('\r\n', size.length + body.length, 'latin1')
  return out
}

// One event goes to every stream: its bytes are made once per framing, and each stream writes the same Buffer.
const encoded = new WeakMap<StreamItem, FrameBytes>()
function frameBytes (item: StreamItem, chunked: boolean): Buffer {
  let b = encoded.get(item)
  if (b === undefined) encoded.set(item, b = {})
  return chunked ? (b.chunked ??= frameBuffer(sseFrame(item), true)) : (b.raw ??= frameBuffer(sseFrame(item), false))
}

const PING = ': ping\n\n'
const TOKEN_EXPIRED = 'event: token_expired\ndata: {"reason":"token_expired"}\n\n'
const fixed = { chunked: { ping: frameBuffer(PING, true), expired: frameBuffer(TOKEN_EXPIRED, true) }, raw: { ping: frameBuffer(PING, false), expired: frameBuffer(TOKEN_EXPIRED, false) } }

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
  // node:http chose the framing with the head: chunked for HTTP/1.1, the bare body for HTTP/1.0.
  // A response that owns its socket (not waiting behind a pipelined one) has its head written
  // there already, so frames go to the socket, framed here; otherwise through res.write.
  const socket = res.socket
  const direct = socket !== null && socket === req.socket
  const chunked = direct && res.chunkedEncoding
  const out: { write: (b: Buffer) => boolean, on: (e: 'drain', cb: () => void) => unknown, off: (e: 'drain', cb: () => void) => unknown } = direct ? socket : res
  const bytes = chunked ? fixed.chunked : fixed.raw
  const sub = hub.subscribe({ lastEventId: lastEventId(req) })
  let finished = false
  /** The last write found the socket's buffer full: nothing more until it drains. */
  let full = false
  let done!: () => void
  const over = new Promise<void>(resolve => { done = resolve })
  const write = (b: Buffer): boolean => {
    if (finished || res.destroyed) return true
    full = !out.write(b)
    return !full
  }
  const drained = () => { full = false; sub.resume() }
  const finish = () => {
    if (finished) return
    finished = true
    clearInterval(ping)
    if (expiry !== null) clearTimeout(expiry)
    out.off('drain', drained)
    sub.close()
    if (!res.destroyed) res.end()
    done()
  }
  const ping = setInterval(() => { if (!full) write(bytes.ping) }, opts.pingIntervalMs ?? 15_000)
  ping.unref()
  // A stream lives no longer than the token that opened it: the client signs in again and reconnects.
  const expiry = opts.expiresAt === undefined ? null : setTimeout(() => { write(bytes.expired); finish() }, Math.max(0, Math.min(opts.expiresAt - Date.now(), 2 ** 31 - 1)))
  expiry?.unref()
  res.on('close', finish)
  res.on('error', finish)
  out.on('drain', drained)
  // A client too slow to drain its buffer is dropped: it reconnects and replays.
  sub.onEnd(reason => { if (reason === 'overflow') res.destroy(); finish() })
  sub.attach(item => write(frameBytes(item, chunked)))
  await over
}
