/**
 * The boundary's objects over Node's own HTTP (node:http's IncomingMessage/ServerResponse, or
 * node:http2's compatibility Http2ServerRequest/Response): uWS's semantics on Node streams.
 *
 *   writeStatus/writeHeader ─> kept until the first write, end or tryEnd writes the head
 *   write(chunk)            ─> res.write: false when Node buffered it ─> 'drain' ─> onWritable(offset)
 *   tryEnd(chunk, total)    ─> head with Content-Length: total; ends when offset reaches total
 *   onData(ab, last)        ─> 'data' (copied into its own ArrayBuffer), then ('', true) at 'end'
 *   onAborted               ─> 'close' before the response finished
 *
 * An HTTP/1.0 client is answered as node:http answers it (RFC 9112): HTTP/1.1 status line, the
 * connection closed after the answer unless it asked for keep-alive, a body of unknown length
 * delimited by the close instead of chunked.
 */
import type http from 'node:http'
import type http2 from 'node:http2'
import type { Chunk, GatewayRequest, GatewayResponse } from './types.js'

export type NodeReq = http.IncomingMessage | http2.Http2ServerRequest
export type NodeRes = http.ServerResponse | http2.Http2ServerResponse

/** Connection-level headers HTTP/2 forbids (Node throws on them). */
const H2_FORBIDDEN = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])
const EMPTY = new ArrayBuffer(0)
const encoder = new TextEncoder()

/** The peer's address as uWS gives it (IPv4-mapped IPv6 as plain IPv4). */
const NO_BYTES = new ArrayBuffer(0)

export function peerAddress (req: NodeReq): string {
  const a = req.socket?.remoteAddress ?? ''
  return a.startsWith('::ffff:') ? a.slice(7) : a
}

/**
 * A chunk as Node may keep it: a copy. uWS copies what it cannot send at once, so callers hand
 * views of buffers they reuse (the backend read buffer); Node would keep the view itself.
 */
const toBuffer = (c: Chunk): Buffer =>
  typeof c === 'string' ? Buffer.from(c) : c instanceof ArrayBuffer ? Buffer.from(new Uint8Array(c)) : Buffer.from(new Uint8Array(c.buffer, c.byteOffset, c.byteLength))

export class NodeResponse implements GatewayResponse {
  private code = 200
  private message = ''
  private readonly head: string[] = []
  private headSent = false
  private done = false
  private offset = 0
  private writable: ((offset: number) => boolean) | null = null
  private aborted: (() => void) | null = null
  private readonly h2: boolean

  constructor (private readonly req: NodeReq, private readonly res: NodeRes, private readonly onEnded: (close: boolean) => void) {
    this.h2 = req.httpVersionMajor === 2
    res.on('close', () => {
      if (this.done && res.writableFinished) return
      this.done = true
      const h = this.aborted
      this.aborted = null
      h?.()
    })
    res.on('drain', () => {
      const h = this.writable
      if (h !== null && h(this.offset)) this.writable = null
    })
  }

  onAborted (handler: () => void): this { this.aborted = handler; return this }

  onData (handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    const req = this.req
    req.on('data', (c: Buffer) => {
      // Its own ArrayBuffer, as uWS hands one: stages copy or slice it as they would uWS's.
      handler(c.buffer.slice(c.byteOffset, c.byteOffset + c.byteLength) as ArrayBuffer, false)
    })
    req.on('end', () => { handler(EMPTY, true) })
    return this
  }

  pause (): void { this.req.pause() }
  resume (): void { this.req.resume() }
  cork (cb: () => void): this {
    // node:http batches the head with the first body write already; HTTP/2 frames per write anyway.
    cb()
    return this
  }

  writeStatus (status: Chunk): this {
    const s = typeof status === 'string' ? status : toBuffer(status).toString()
    const sp = s.indexOf(' ')
    this.code = Number(sp < 0 ? s : s.slice(0, sp))
    this.message = sp < 0 ? '' : s.slice(sp + 1)
    return this
  }

  writeHeader (key: Chunk, value: Chunk): this {
    this.head.push(typeof key === 'string' ? key : toBuffer(key).toString(), typeof value === 'string' ? value : toBuffer(value).toString())
    return this
  }

  write (chunk: Chunk): boolean {
    if (this.done) return true
    this.sendHead(-1, false)
    const b = toBuffer(chunk)
    this.offset += b.length
    return (this.res as http.ServerResponse).write(b)
  }

  end (body?: Chunk, closeConnection = false): this {
    if (this.done) return this
    const b = body === undefined ? null : toBuffer(body)
    this.sendHead(this.headSent ? -1 : b === null ? 0 : b.length, closeConnection)
    this.finish(b, closeConnection)
    return this
  }

  endWithoutBody (reportedContentLength?: number, closeConnection = false): this {
    if (this.done) return this
    this.sendHead(reportedContentLength ?? -1, closeConnection)
    this.finish(null, closeConnection)
    return this
  }

  tryEnd (chunk: Chunk, totalSize: number): [boolean, boolean] {
    if (this.done) return [true, true]
    this.sendHead(totalSize, false)
    const b = toBuffer(chunk)
    this.offset += b.length
    // Node keeps what the socket cannot take yet: the whole chunk counts as written, and
    // onWritable's offset lets the caller see there is nothing left to resend.
    const ok = (this.res as http.ServerResponse).write(b)
    if (this.offset >= totalSize) { this.finish(null, false); return [ok, true] }
    return [ok, false]
  }

  getWriteOffset (): number { return this.offset }
  onWritable (handler: (offset: number) => boolean): this { this.writable = handler; return this }

  close (): this {
    this.done = true
    const h2 = this.h2 ? (this.req as http2.Http2ServerRequest).stream : null
    if (h2 !== null) h2.close(0x8) // CANCEL: the stream is cut, the connection's other streams go on
    else this.req.socket.destroy()
    return this
  }

  getRemoteAddressAsText (): ArrayBuffer { return encoder.encode(peerAddress(this.req)).buffer as ArrayBuffer }
  // Node has the address as text only: callers fall back to the text.
  getRemoteAddress (): ArrayBuffer { return NO_BYTES }

  /** Writes the status line and headers once; length >= 0 adds Content-Length. */
  private sendHead (length: number, close: boolean): void {
    if (this.headSent) return
    this.headSent = true
    const head = this.head
    if (this.h2) {
      const res = this.res as http2.Http2ServerResponse
      const out: Record<string, string | string[]> = {}
      // head is name, value pairs: i and i + 1 are in range.
      for (let i = 0; i < head.length; i += 2) {
        const k = head[i]!.toLowerCase()
        if (H2_FORBIDDEN.has(k)) continue
        const prev = out[k]
        const v = head[i + 1]!
        out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
      }
      if (length >= 0) out['content-length'] = String(length)
      res.writeHead(this.code, out)
      return
    }
    const res = this.res as http.ServerResponse
    if (length >= 0) head.push('content-length', String(length))
    if (close) head.push('connection', 'close')
    if (this.message === '') res.writeHead(this.code, head)
    else res.writeHead(this.code, this.message, head)
  }

  private finish (body: Buffer | null, close: boolean): void {
    this.done = true
    this.onEnded(close)
    if (body === null) this.res.end()
    else this.res.end(body)
  }
}

/** The request head as the boundary reads it; `extra` is one header the layer adds (the TLS hop). */
export class NodeRequest implements GatewayRequest {
  private readonly path: string
  private readonly query: string

  constructor (private readonly req: NodeReq, private readonly extra: [string, string] | null, private readonly dropName: string) {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    this.path = q < 0 ? url : url.slice(0, q)
    this.query = q < 0 ? '' : url.slice(q + 1)
  }

  getCaseSensitiveMethod (): string { return this.req.method ?? 'GET' }
  getUrl (): string { return this.path }
  getQuery (): string { return this.query }

  getHeader (lowerCaseKey: string): string {
    const raw = this.req.rawHeaders
    // rawHeaders is name, value pairs: i and i + 1 are in range (here and in forEach).
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === lowerCaseKey) return raw[i + 1]!
    return ''
  }

  forEach (cb: (key: string, value: string) => void): void {
    const raw = this.req.rawHeaders
    let authority = false
    let length = false
    for (let i = 0; i < raw.length; i += 2) {
      let k = raw[i]!.toLowerCase()
      if (k === this.dropName) continue
      if (k === 'content-length') length = true
      if (k.charCodeAt(0) === 58) { // ':' HTTP/2 pseudo-headers: only :authority is a header (Host)
        if (k !== ':authority') continue
        k = 'host'
        authority = true
      } else if (k === 'host' && authority) continue // HTTP/2: :authority wins over a Host beside it (RFC 9113 §8.3.1)
      // Repeated Host lines are passed on as sent: the gateway refuses them (400).
      cb(k, raw[i + 1]!)
    }
    // HTTP/2 frames a body without Content-Length: the stages read it as HTTP/1.1's chunked (length unknown).
    if (this.req.httpVersionMajor === 2 && !length && !(this.req as http2.Http2ServerRequest).stream.endAfterHeaders) cb('transfer-encoding', 'chunked')
    if (this.extra !== null) cb(this.extra[0], this.extra[1])
  }
}
