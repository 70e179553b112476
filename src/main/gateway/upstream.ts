/**
 * A lean keep-alive HTTP/1.1 client for forwarding. Per origin it keeps idle
 * sockets for reuse; each socket has its listeners attached once and hands
 * bytes to whichever exchange currently owns it (no per-request listener churn).
 *
 *   exchange ─ acquire ─> idle socket? ──yes──> write head(+body)
 *                              └─no──> connect (connect timeout) ─┘
 *   socket data ─> ResponseParser ─> onHead / onBody / onEnd ─> release (keep-alive) or destroy
 */
import net from 'node:net'
import tls from 'node:tls'
import { ResponseParser, type ParserEvents, type ResponseHead } from './response-parser.js'

export type ExchangeFailure = 'connect' | 'timeout' | 'protocol' | 'stalled'

export interface ExchangeEvents {
  onHead (head: ResponseHead, framing: 'none' | 'length' | 'chunked' | 'close', length: number): void
  onBody (chunk: Buffer): void
  onEnd (): void
  /**
   * kind: 'connect' (never reached), 'timeout' (no answer in time), 'protocol' (bad answer or cut
   * short), 'stalled' (the client took nothing of the answer for the timeout while the backend was paused for it).
   */
  onError (kind: ExchangeFailure, err: Error): void
}

export interface ExchangeOptions {
  head: string
  /** Whole body known up front (or null for none). */
  body: Buffer | null
  /** The body follows through write(); sent with chunked framing unless the head declares a length. */
  streamingBody: boolean
  noResponseBody: boolean
  /** Safe to resend on a fresh connection when a reused one was found closed. */
  retryable: boolean
  connectTimeoutMs: number
  responseTimeoutMs: number
  events: ExchangeEvents
}

interface PooledSocket { socket: net.Socket, owner: Exchange | null, reused: boolean }

export class OriginPool {
  private readonly idle: PooledSocket[] = []
  constructor (readonly host: string, readonly port: number, readonly secure: boolean, readonly servername: string, private readonly maxIdle: number) {}

  request (opts: ExchangeOptions): Exchange {
    const ex = new Exchange(this, opts)
    ex.start()
    return ex
  }

  acquire (): PooledSocket | null {
    while (this.idle.length > 0) {
      const ps = this.idle.pop()!
      if (!ps.socket.destroyed && ps.socket.readyState === 'open') { ps.reused = true; return ps }
    }
    return null
  }

  connect (onReady: (ps: PooledSocket) => void, onFail: (err: Error) => void, timeoutMs: number): PooledSocket {
    // Plain TCP reads into one reused buffer (see READ_BUFFER): Node's stream path made a Buffer
    // and a 'data' event per read, 2.5-4 µs more per answer.
    let ps: PooledSocket | null = null
    const socket = this.secure
      ? tls.connect({ host: this.host, port: this.port, servername: net.isIP(this.servername) === 0 ? this.servername : undefined })
      : net.connect({ host: this.host, port: this.port, onread: { buffer: READ_BUFFER, callback: n => { if (ps !== null) received(ps, READ_BUFFER.subarray(0, n)); return true } } })
    ps = { socket, owner: null, reused: false }
    socket.setNoDelay(true)
    const timer = setTimeout(() => { socket.destroy(new Error(`connect timeout after ${timeoutMs} ms`)) }, timeoutMs)
    const ready = () => { clearTimeout(timer); socket.off('error', fail); wire(this, ps); onReady(ps) }
    const fail = (err: Error) => { clearTimeout(timer); onFail(err) }
    socket.once(this.secure ? 'secureConnect' : 'connect', ready)
    socket.once('error', fail)
    return ps
  }

  release (ps: PooledSocket): void {
    ps.owner = null
    if (this.idle.length >= this.maxIdle || ps.socket.destroyed) { ps.socket.destroy(); return }
    this.idle.push(ps)
  }

  close (): void {
    for (const ps of this.idle.splice(0)) ps.socket.destroy()
  }
}

/**
 * Where plain upstream sockets read (net's `onread`): the bytes of one read are only valid during
 * its callback, the next read of any socket overwrites them. Whatever outlives the callback is
 * copied: a response head split across reads (ResponseParser), a small answer gathered whole and
 * a chunk the client could not take yet (forward.ts's Relay). uWS copies what it buffers.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)

function received (ps: PooledSocket, buf: Buffer): void {
  if (ps.owner !== null) ps.owner.data(buf)
  else ps.socket.destroy() // bytes on an idle connection: not reusable
}

function wire (pool: OriginPool, ps: PooledSocket): void {
  ps.socket.setKeepAlive(true, 30_000)
  // TLS sockets read through the stream ('data'); plain ones through READ_BUFFER.
  if (pool.secure) ps.socket.on('data', (buf: Buffer) => { received(ps, buf) })
  ps.socket.on('end', () => { if (ps.owner !== null) ps.owner.eof() })
  ps.socket.on('error', (err: Error) => { if (ps.owner !== null) ps.owner.socketError(err) })
  ps.socket.on('close', () => { if (ps.owner !== null) ps.owner.socketError(new Error('upstream connection closed')) })
  ps.socket.on('drain', () => { ps.owner?.drained() })
}

export class Exchange implements ParserEvents {
  private ps: PooledSocket | null = null
  private parser: ResponseParser
  private timer: NodeJS.Timeout | null = null
  private timerMs = 0
  private gotBytes = false
  private sentBody = false
  private bodyEnded = false
  private finished = false
  private retried = false
  /** The backend socket is paused because the client is slow (see pause()). */
  private paused = false
  private pendingBody: Array<{ chunk: Buffer, last: boolean }> = []
  private chunkedOut: boolean
  onDrain: (() => void) | null = null

  constructor (private readonly pool: OriginPool, private readonly o: ExchangeOptions) {
    this.parser = this.newParser()
    this.chunkedOut = o.streamingBody && !/\r\ncontent-length:/i.test(o.head)
  }

  // The exchange hears its parser itself (ParserEvents below): no closures per request.
  private newParser (): ResponseParser {
    return new ResponseParser(this, this.o.noResponseBody)
  }

  onHead (h: ResponseHead, f: 'none' | 'length' | 'chunked' | 'close', l: number): void {
    // From the head on, the timeout is an idle one: no progress on either side for that long. While
    // the backend is paused because the client is slow, progress is the client taking more (progress()).
    this.armIdle(this.o.responseTimeoutMs)
    this.o.events.onHead(h, f, l)
  }

  onBody (c: Buffer): void { this.timer?.refresh(); this.o.events.onBody(c) }

  onEnd (reusable: boolean): void { this.complete(reusable) }

  start (): void {
    const ps = this.pool.acquire()
    if (ps !== null) { this.attach(ps); return }
    this.pool.connect(p => { if (this.finished) this.pool.release(p); else this.attach(p) },
      err => this.fail('connect', err), this.o.connectTimeoutMs)
  }

  private attach (ps: PooledSocket): void {
    this.ps = ps
    ps.owner = this
    this.timer = setTimeout(answerExpired, this.o.responseTimeoutMs, this)
    // Head and a known body leave in one write.
    if (this.o.body !== null && this.o.body.length > 0) {
      // Corked: head and body leave in one writev, without concatenating them.
      ps.socket.cork()
      ps.socket.write(this.o.head, 'latin1')
      ps.socket.write(this.o.body)
      ps.socket.uncork()
    } else ps.socket.write(this.o.head, 'latin1')
    if (this.pendingBody.length > 0) {
      let ok = true
      for (const p of this.pendingBody.splice(0)) ok = this.writeBody(p.chunk, p.last)
      // Not ok: the socket's 'drain' calls onDrain once the backend has taken the bytes.
      if (ok) this.onDrain?.()
    }
  }

  /**
   * Streams a request body chunk; returns false when the caller should wait for onDrain. Every
   * byte is written whatever write() returns (false means "buffered past the mark", not "dropped"):
   * a chunk's size line, data and CRLF always leave together, in one corked writev.
   */
  writeBody (chunk: Buffer, last: boolean): boolean {
    if (this.finished) return true
    if (this.ps === null) { this.pendingBody.push({ chunk, last }); return this.pendingBody.length < 16 }
    this.sentBody = true
    if (last) this.bodyEnded = true
    // Upload progress is progress: the timeout counts from the last byte sent, not from the head.
    this.timer?.refresh()
    const s = this.ps.socket
    if (!this.chunkedOut) return chunk.length > 0 ? s.write(chunk) : !s.writableNeedDrain
    if (chunk.length === 0) return last ? s.write('0\r\n\r\n', 'latin1') : !s.writableNeedDrain
    s.cork()
    s.write(`${chunk.length.toString(16)}\r\n`, 'latin1')
    s.write(chunk)
    const ok = s.write(last ? '\r\n0\r\n\r\n' : '\r\n', 'latin1')
    s.uncork()
    return ok
  }

  drained (): void {
    this.timer?.refresh()
    this.onDrain?.()
  }

  /**
   * Stops reading the backend while the client is slow. The backend's silence no longer counts;
   * the client's does, from now, and it has at least CLIENT_STALL_MIN_MS.
   */
  pause (): void {
    if (this.ps === null) return
    this.paused = true
    this.ps.socket.pause()
    this.armIdle(Math.max(this.o.responseTimeoutMs, CLIENT_STALL_MIN_MS))
  }

  /** Reads the backend again; its silence counts from now. */
  resume (): void {
    if (this.ps === null) return
    this.paused = false
    this.ps.socket.resume()
    this.armIdle(this.o.responseTimeoutMs)
  }

  /** The client took more of the answer while the backend is paused for it: progress. */
  progress (): void { this.timer?.refresh() }

  /** The client went away: drop the upstream connection. */
  abort (): void {
    if (this.finished) return
    this.finished = true
    this.clearTimer()
    if (this.ps !== null) { this.ps.owner = null; this.ps.socket.destroy() }
  }

  data (buf: Buffer): void {
    this.gotBytes = true
    try { this.parser.push(buf) } catch (err) { this.fail('protocol', err as Error) }
  }

  eof (): void {
    try { this.parser.eof() } catch (err) { this.fail('protocol', err as Error) }
  }

  socketError (err: Error): void {
    if (this.finished) return
    // A reused keep-alive socket the peer had already closed: resend once on a new one.
    if (!this.gotBytes && this.ps?.reused === true && this.o.retryable && !this.sentBody && !this.retried) {
      this.retried = true
      this.clearTimer()
      this.ps.owner = null
      this.ps.socket.destroy()
      this.ps = null
      this.parser = this.newParser()
      this.start()
      return
    }
    if (this.parser.closeDelimited) { this.eof(); return }
    this.fail(this.gotBytes ? 'protocol' : (this.ps === null ? 'connect' : 'protocol'), err)
  }

  private complete (reusable: boolean): void {
    if (this.finished) return
    this.finished = true
    this.clearTimer()
    const ps = this.ps
    this.ps = null
    if (ps !== null) {
      ps.socket.resume()
      if (reusable && (!this.o.streamingBody || this.bodyEnded)) this.pool.release(ps)
      else { ps.owner = null; ps.socket.destroy() }
    }
    this.o.events.onEnd()
  }

  private fail (kind: ExchangeFailure, err: Error): void {
    if (this.finished) return
    this.finished = true
    this.clearTimer()
    if (this.ps !== null) { this.ps.owner = null; this.ps.socket.destroy(); this.ps = null }
    this.o.events.onError(kind, err)
  }

  /** (Re)starts the idle timer; refresh() keeps its duration, so a new duration needs a new timer. */
  private armIdle (ms: number): void {
    if (this.timer !== null && this.timerMs === ms) { this.timer.refresh(); return }
    this.clearTimer()
    this.timerMs = ms
    // A module-level callback with the exchange as argument: no closure per timer.
    this.timer = setTimeout(idleExpired, ms, this)
  }

  /** No answer's head within the response timeout (see attach). */
  answerExpired (): void { this.fail('timeout', new Error(`no answer within ${this.o.responseTimeoutMs} ms`)) }

  /** No progress on either side for the idle time (see onHead). */
  idleExpired (): void {
    if (this.paused) this.fail('stalled', new Error(`the client took nothing of the answer for ${this.timerMs} ms`))
    else this.fail('timeout', new Error(`the backend sent nothing for ${this.timerMs} ms while answering`))
  }

  private clearTimer (): void {
    if (this.timer !== null) { clearTimeout(this.timer); this.timer = null }
  }
}

/**
 * While the backend is paused for a slow client, the client's progress is seen only when its socket
 * drains enough to be writable again, which a steady reader at a few hundred KB/s reaches every second
 * or so; the HTTP layer (uWS) itself allows 10 s between such events. A client taking nothing for
 * this long (or the route's timeout, if longer) is cut.
 */
const CLIENT_STALL_MIN_MS = 10_000

function idleExpired (ex: Exchange): void { ex.idleExpired() }
function answerExpired (ex: Exchange): void { ex.answerExpired() }

/** One pool per upstream origin. */
export class UpstreamClient {
  private readonly pools = new Map<string, OriginPool>()
  constructor (private readonly maxIdle: number) {}

  pool (host: string, port: number, secure: boolean): OriginPool {
    const key = `${secure ? 's' : 'p'}:${host}:${port}`
    let p = this.pools.get(key)
    if (p === undefined) this.pools.set(key, p = new OriginPool(host, port, secure, host, this.maxIdle))
    return p
  }

  close (): void { for (const p of this.pools.values()) p.close() }
}
