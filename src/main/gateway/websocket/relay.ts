/**
 * WebSocket proxying: an `Upgrade: websocket` request to a proxy with `websocket: true`, once the
 * stages before (auth, policy, validation of the handshake request) let it through, is relayed to
 * the backend (ws:// or wss:// from its target URL); when the backend answers 101, the client's
 * upgrade is accepted and messages flow both ways until either side closes, which closes the other.
 *
 *   client ──uWS WebSocket──> WsRelay ──masked frames──> backend socket
 *          <──send (queued: pause the backend socket until drain)── FrameReader <──┘
 *
 * On the node layer (GATEWAY_SERVER=node) the client's own handshake goes to the backend and, on
 * its 101, the two connections are joined byte for byte (tunnel.ts). A backend that answers the
 * handshake with anything but 101 has that answer relayed to the client (an answer with a chunked
 * or oversized body, a bad 101 or no answer at all: 502 in the gateway's error shape).
 *
 * Backpressure (uWS layer): a client that reads slowly pauses the backend socket (resumed on drain). This uWS
 * build cannot pause reading a WebSocket, so a backend that reads slowly is given up to
 * MAX_PENDING_TO_BACKEND bytes before the connection closes (1013). Counted in the request log
 * and metrics as one request with status 101 and the session's duration.
 */
import { createHash, randomBytes } from 'node:crypto'
import net from 'node:net'
import tls from 'node:tls'
import { badGateway, serviceUnavailable } from '../../../common/errors.js'
import type { GatewayExchange } from '../exchange.js'
import type { GatewaySocket, SocketSession } from '../http/types.js'
import { MAX_WS_MESSAGE } from '../http/uws.js'
import { buildRequestHead, buildTargetPath, type ClientRequestInfo } from '../request-head.js'
import type { Endpoint } from '../upstreams/endpoint.js'
import { passiveFailure, passiveSuccess } from '../upstreams/health.js'
import { startBackendSpan } from '../spans.js'
import { startTunnel } from './tunnel.js'
import { closePayload, encodeFrame, FrameReader, OP_BINARY, OP_CLOSE, OP_PONG, OP_TEXT, type FrameEvents } from './frames.js'

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
/** Not forwarded: the client's handshake is the gateway's, the gateway makes its own to the backend. */
const HANDSHAKE_HEADERS = new Set(['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions'])
const HIGH_WATER = 1024 * 1024
const MAX_PENDING_TO_BACKEND = 16 * 1024 * 1024
const MAX_HEAD = 16 * 1024

export function relayWebSocket (x: GatewayExchange, query: string): void {
  const route = x.match!.route
  const set = route.balanced
  let endpoint: Endpoint | null = null
  let t = { host: route.upstream.hostname, port: route.upstream.port, secure: route.upstream.protocol === 'https:', servername: route.upstream.hostname, hostHeader: route.upstream.hostHeader, basePath: route.upstream.basePath }
  if (set !== null) {
    const e = set.pick(x, x, false)
    if (e === 'capped') { x.fail(serviceUnavailable('Every backend of this API is at its limit of requests in flight; retry shortly.', 1)); return }
    if (e === null) { x.fail(badGateway('The backend could not be reached.')); return }
    endpoint = e
    e.triedBy = x
    e.inFlight++
    t = { host: e.address, port: e.target.port, secure: e.target.secure, servername: e.target.hostname, hostHeader: e.target.hostHeader, basePath: e.target.basePath }
  }
  const { params, tail } = x.match!
  // node layer: the client's own handshake goes to the backend (its key, version and extensions),
  // and the bytes are relayed as they are; uWS layer: the gateway makes its own handshake.
  const tunnel = x.take !== null
  const info: ClientRequestInfo = {
    method: 'GET', headers: tunnel ? x.headers : x.headers.filter(h => !HANDSHAKE_HEADERS.has(h[0])), host: x.publicHost, xff: x.xff, remoteIp: x.peerIp, clientIp: x.remoteIp, proto: x.proto,
    requestId: x.rid, traceparent: null, tracestate: null, connectionTokens: null
  }
  if (x.span !== null && x.backendSpan === null) { info.traceparent = startBackendSpan(x, buildTargetPath(route, params, tail, t.basePath)); info.tracestate = x.span.state ?? null }
  const key = tunnel ? x.headers.find(h => h[0] === 'sec-websocket-key')?.[1] ?? '' : randomBytes(16).toString('base64')
  const head = buildRequestHead(route, info, buildTargetPath(route, params, tail, t.basePath) + (query !== '' ? `?${query}` : ''), 0, t.hostHeader).slice(0, -2) +
    (tunnel ? 'connection: upgrade\r\nupgrade: websocket\r\n\r\n' : `connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-key: ${key}\r\nsec-websocket-version: 13\r\n\r\n`)
  const socket = t.secure
    ? tls.connect({ host: t.host, port: t.port, servername: net.isIP(t.servername) === 0 ? t.servername : undefined })
    : net.connect({ host: t.host, port: t.port })
  socket.setNoDelay(true)
  x.upstreamStart = performance.now()
  const limitMs = x.ctx.config.UPSTREAM_CONNECT_TIMEOUT_MS + (route.timeoutMs ?? x.ctx.config.UPSTREAM_TIMEOUT_MS)
  let received = Buffer.alloc(0)
  let settled = false
  const release = (): void => { if (endpoint !== null) { endpoint.inFlight--; endpoint = null } }
  let connected = false
  /** The backend answered something other than 101: unless it was a failure, that answer (head and a Content-Length body) is the client's. */
  let answer: { status: number, text: string, headers: Array<[string, string]>, body: Buffer } | null = null
  const refuse = (why: string, err: string): void => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    socket.destroy()
    if (endpoint !== null && set !== null) {
      if (answer !== null && answer.status < 500) passiveSuccess(set.scope, endpoint)
      else passiveFailure(set.scope, endpoint, err, Date.now())
    }
    release()
    // Never connected: nothing was sent, another target may take the handshake.
    if (!connected && set !== null && !x.aborted && set.endpoints.some(e => e.triedBy !== x)) { relayWebSocket(x, query); return }
    if (answer !== null) {
      const a = answer
      x.status = a.status
      if (a.status >= 500) x.warnFailure(a.status, why, { error: err })
      if (x.aborted) { x.finish(route.name); return }
      x.bytesOut = a.body.length
      x.res.cork(() => {
        x.writeHead(a.status, a.text, a.headers, null)
        x.res.end(a.body, true)
      })
      x.finish(route.name, Math.round(performance.now() - x.upstreamStart))
      return
    }
    x.warnFailure(502, why, { error: err })
    x.fail(badGateway(why === 'backend unreachable' ? 'The backend could not be reached.' : 'The backend refused the WebSocket upgrade.'))
  }
  const timer = setTimeout(() => refuse('backend timeout during the WebSocket handshake', `no 101 within ${limitMs} ms`), limitMs)
  socket.once(t.secure ? 'secureConnect' : 'connect', () => { connected = true; socket.write(head, 'latin1') })
  socket.on('error', (err: Error) => { answer = null; refuse('backend unreachable', err.message) })
  socket.on('close', () => { answer = null; refuse('backend closed during the WebSocket handshake', 'connection closed') })
  const onData = (chunk: Buffer): void => {
    received = Buffer.concat([received, chunk])
    const end = received.indexOf('\r\n\r\n')
    if (end < 0) { if (received.length > MAX_HEAD) refuse('backend sent an oversized handshake answer', 'head too large'); return }
    const lines = received.subarray(0, end).toString('latin1').split('\r\n')
    const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0] ?? '')
    const status = Number(m?.[1] ?? 0)
    const fields = lines.slice(1).map(l => { const i = l.indexOf(':'); return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string] })
    const headers = new Map(fields)
    if (status !== 101 && status >= 200 && status <= 599 && !headers.has('transfer-encoding')) {
      // A refusal with its own answer (401, 403, 404, 426…): relayed once its body is here.
      const length = Number(headers.get('content-length') ?? 0)
      if (!Number.isSafeInteger(length) || length < 0 || length > MAX_HEAD) { refuse('backend refused the WebSocket upgrade', `answered ${status}`); return }
      if (received.length < end + 4 + length) return
      answer = { status, text: m?.[2] ?? '', headers: fields, body: Buffer.from(received.subarray(end + 4, end + 4 + length)) }
      refuse('backend refused the WebSocket upgrade', `answered ${status}`)
      return
    }
    const expected = createHash('sha1').update(key + GUID).digest('base64')
    if (status !== 101 || headers.get('sec-websocket-accept') !== expected) { refuse('backend refused the WebSocket upgrade', `answered ${status}`); return }
    settled = true
    clearTimeout(timer)
    socket.off('data', onData)
    socket.removeAllListeners('error')
    socket.removeAllListeners('close')
    // Held until the client side is open; the rest of this read is the backend's first frames.
    socket.pause()
    if (endpoint !== null && set !== null) passiveSuccess(set.scope, endpoint)
    if (x.aborted) { socket.destroy(); release(); x.finish(route.name); return }
    if (x.take !== null) { startTunnel(x, x.take(), socket, received.subarray(0, end + 2).toString('latin1'), received.subarray(end + 4), release); return }
    const relay = new WsRelay(x, socket, received.subarray(end + 4), release)
    x.accept!(relay, headers.get('sec-websocket-protocol') ?? null)
  }
  socket.on('data', onData)
}

class WsRelay implements SocketSession {
  private client: GatewaySocket | null = null
  private readonly reader: FrameReader
  private paused = true
  private clientClosed = false
  private backendClosed = false
  /** A close decided before the client side was open. */
  private pendingClose: [number, string] | null = null

  constructor (private readonly x: GatewayExchange, private readonly socket: net.Socket, private readonly early: Buffer, private readonly release: () => void) {
    x.status = 101
    const events: FrameEvents = {
      onMessage: (data, isBinary) => this.fromBackend(data, isBinary),
      onPing: data => { if (!this.backendClosed) socket.write(encodeFrame(OP_PONG, data)) },
      onClose: (code, reason) => this.backendClose(code, reason),
      onError: message => {
        x.ctx.logger.warn({ request_id: x.rid, route: x.match!.route.name, error: message }, 'WebSocket relay closed: bad frame from the backend')
        this.backendClosed = true
        socket.destroy()
        this.closeClient(1011, 'the backend sent an invalid frame')
      }
    }
    this.reader = new FrameReader(events, MAX_WS_MESSAGE)
    socket.on('data', (chunk: Buffer) => this.reader.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      if (this.backendClosed) return
      this.backendClosed = true
      // Cut without a close frame: the client hears why.
      this.closeClient(1011, 'the backend connection closed')
    })
  }

  onOpen (client: GatewaySocket): void {
    this.client = client
    if (this.pendingClose !== null) { client.end(this.pendingClose[0], this.pendingClose[1]); return }
    if (this.early.length > 0) this.reader.push(this.early)
    this.resumeBackend()
  }

  onMessage (message: ArrayBuffer, isBinary: boolean): void {
    if (this.backendClosed) return
    this.x.bytesIn += message.byteLength
    // The message is only valid during this call; encodeFrame copies it into the frame.
    this.socket.write(encodeFrame(isBinary ? OP_BINARY : OP_TEXT, new Uint8Array(message)))
    if (this.socket.writableLength > MAX_PENDING_TO_BACKEND) this.closeClient(1013, 'the backend is not reading')
  }

  onDrain (): void {
    if (this.client !== null && this.client.getBufferedAmount() < HIGH_WATER) this.resumeBackend()
  }

  onClose (code: number, reason: ArrayBuffer): void {
    this.clientClosed = true
    this.client = null
    if (!this.backendClosed) {
      this.backendClosed = true
      // The client's close, passed on (1005/1006: it gave no code or vanished).
      const payload = code === 1005 || code === 1006 ? Buffer.alloc(0) : closePayload(code, new Uint8Array(reason))
      this.socket.end(encodeFrame(OP_CLOSE, payload))
      setTimeout(() => this.socket.destroy(), 5000).unref()
    }
    this.release()
    this.x.finish(this.x.match!.route.name, Math.round(performance.now() - this.x.upstreamStart))
  }

  private fromBackend (data: Buffer, isBinary: boolean): void {
    const client = this.client
    if (client === null || this.clientClosed) return
    this.x.bytesOut += data.length
    client.send(data, isBinary)
    // A slow client: stop reading the backend until uWS has sent what it holds.
    if (client.getBufferedAmount() >= HIGH_WATER && !this.paused) { this.paused = true; this.socket.pause() }
  }

  private backendClose (code: number, reason: Buffer): void {
    if (this.backendClosed) return
    this.backendClosed = true
    // Answered as the protocol asks, then the client is closed with the backend's code.
    this.socket.end(encodeFrame(OP_CLOSE, code === 1005 ? Buffer.alloc(0) : closePayload(code, reason)))
    this.closeClient(code === 1005 || code === 1006 || code === 1015 ? 1000 : code, reason.toString())
  }

  private resumeBackend (): void { if (this.paused) { this.paused = false; this.socket.resume() } }

  private closeClient (code: number, reason: string): void {
    if (this.clientClosed) return
    if (this.client === null) { this.pendingClose ??= [code, reason]; return }
    this.client.end(code, reason)
  }
}
