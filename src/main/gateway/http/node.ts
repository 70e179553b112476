/**
 * The node HTTP layer (GATEWAY_SERVER=node): node:http on PORT (HTTP/1.0 and 1.1), and on
 * TLS_PORT node:http2 with allowHTTP1 (ALPN h2 and http/1.1) checking client certificates
 * in-process. No native binary: it runs wherever Node runs (Node 20, 22, 24).
 *
 *   socket ─> llhttp / nghttp2 ─> 'request' ─> too many header fields? 431
 *                                    │ HTTP/1.x: one request at a time per connection (pipelined ones wait;
 *                                    │ after an answer that closes, they are dropped unanswered)
 *                                    └─> route (exact, /prefix/*, catch-all) ─> handler(NodeResponse, NodeRequest)
 *   socket ─> llhttp ─> 'upgrade' (Upgrade: websocket) ─> upgrade route ─> handler(NodeResponse on the socket, NodeRequest, take)
 *
 * What Node's parser refuses never reaches a handler: a head over MAX_HEADER_BYTES gets 431, a
 * malformed request 400 (or 408 when the head is too slow), each with a JSON error and the
 * connection closed; the refusal is logged at info.
 */
import fs from 'node:fs'
import http from 'node:http'
import http2 from 'node:http2'
import type net from 'node:net'
import type { TLSSocket } from 'node:tls'
import { errorBody, headersTooLarge, badRequest, AppError } from '../../../common/errors.js'
import type { Logger } from '../../logger.js'
import { certFingerprint, hopValue, TLS_HOP_HEADER } from '../tls-listener.js'
import { NodeRequest, NodeResponse, peerAddress, type NodeReq, type NodeRes } from './node-exchange.js'
import { portTaken, type HttpHandler, type HttpLayer, type Route, type UpgradeHandler } from './types.js'

/** Bytes of a request head (as uWS's UWS_HTTP_MAX_HEADERS_SIZE, which the service sets to 16 KiB). */
export const MAX_HEADER_BYTES = 16384
/** Header fields of a request (uWS serves up to 98 and closes the connection beyond). */
export const MAX_HEADER_FIELDS = 98

export interface NodeLayerOptions {
  logger: Logger
  /** The TLS hop secret: requests on TLS_PORT carry their certificate to the stages as the uWS relay's do. */
  hopSecret: string
}

export interface TlsOptions { cert: string, key: string, ca: string, host: string, port: number }

interface Methods { get: HttpHandler | null, any: HttpHandler | null, upgrade: UpgradeHandler | null }
type Pick = (m: Methods) => HttpHandler | UpgradeHandler | null
interface Conn { busy: boolean, closing: boolean, queue: Array<[NodeReq, NodeRes]> }
const CONN = Symbol('gatehouse.conn')

/** Exact paths, then the longest `/prefix/*`, then the catch-all `/*` (uWS's order); upgrade handlers apart. */
function compileRoutes (routes: readonly Route[]): { http: (method: string, path: string) => HttpHandler | null, upgrade: (path: string) => UpgradeHandler | null } {
  const exact = new Map<string, Methods>()
  const prefixes: Array<[string, Methods]> = []
  const slot = (map: Map<string, Methods>, key: string): Methods => {
    let m = map.get(key)
    if (m === undefined) map.set(key, m = { get: null, any: null, upgrade: null })
    return m
  }
  const byPrefix = new Map<string, Methods>()
  for (const r of routes) {
    const m = r.pattern.endsWith('/*') ? slot(byPrefix, r.pattern.slice(0, -1)) : slot(exact, r.pattern)
    if (r.method === 'upgrade') m.upgrade ??= r.handler
    else m[r.method] ??= r.handler
  }
  for (const e of byPrefix) prefixes.push(e)
  prefixes.sort((a, b) => b[0].length - a[0].length)
  const find = (path: string, pick: Pick): HttpHandler | UpgradeHandler | null => {
    const e = exact.get(path)
    const h = e === undefined ? null : pick(e)
    if (h !== null) return h
    for (let i = 0; i < prefixes.length; i++) {
      const [prefix, methods] = prefixes[i]!
      if (!path.startsWith(prefix)) continue
      const p = pick(methods)
      if (p !== null) return p
    }
    return null
  }
  const getOrAny: Pick = m => m.get ?? m.any
  const any: Pick = m => m.any
  const upgrade: Pick = m => m.upgrade
  return {
    http: (method, path) => find(path, method === 'GET' ? getOrAny : any) as HttpHandler | null,
    upgrade: path => find(path, upgrade) as UpgradeHandler | null
  }
}

function refusal (err: AppError): string {
  const body = JSON.stringify(errorBody(err))
  return `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
}
const TOO_LARGE = refusal(headersTooLarge(`The request head is larger than ${MAX_HEADER_BYTES} bytes.`))
const TOO_MANY = headersTooLarge(`The request has more than ${MAX_HEADER_FIELDS} header fields.`)

export function createNodeLayer (routes: readonly Route[], o: NodeLayerOptions): HttpLayer & { listenTls (t: TlsOptions): Promise<number> } {
  const { http: route, upgrade: upgradeRoute } = compileRoutes(routes)
  const servers: Array<http.Server | http2.Http2SecureServer> = []
  const sockets = new Set<net.Socket>()
  const sessions = new Set<http2.Http2Session>()

  const dispatch = (req: NodeReq, res: NodeRes, extra: [string, string] | null, conn: Conn | null): void => {
    if (conn !== null) conn.busy = true
    const done = (close: boolean): void => {
      if (conn === null) return
      if (close) conn.closing = true
      const next = (): void => {
        if (!conn.busy) return
        conn.busy = false
        // After an answer that closes the connection nothing pipelined behind it runs (desync guard).
        if (conn.closing) { conn.queue.length = 0; return }
        const q = conn.queue.shift()
        if (q !== undefined) dispatch(q[0], q[1], extra, conn)
      }
      res.once('finish', next)
      res.once('close', next)
    }
    const gres = new NodeResponse(req, res, done)
    if (req.rawHeaders.length > (MAX_HEADER_FIELDS + (req.httpVersionMajor === 2 ? 4 : 0)) * 2) {
      o.logger.info({ peer: peerAddress(req), fields: req.rawHeaders.length / 2 }, 'request refused by the HTTP layer: too many header fields')
      gres.writeStatus('431 Request Header Fields Too Large').writeHeader('content-type', 'application/json').end(JSON.stringify(errorBody(TOO_MANY)), true)
      return
    }
    const path = (req.url ?? '/').split('?', 1)[0]!
    const h = route(req.method ?? 'GET', path)
    if (h === null) { gres.writeStatus('404 Not Found').end('', true); return }
    h(gres, new NodeRequest(req, extra, TLS_HOP_HEADER))
  }

  // HTTP/1.x: requests on one connection run one after another, as uWS runs them.
  const onRequest = (extraOf: ((req: NodeReq) => [string, string]) | null) => (req: NodeReq, res: NodeRes): void => {
    const extra = extraOf === null ? null : extraOf(req)
    if (req.httpVersionMajor === 2) { dispatch(req, res, extra, null); return }
    const s = req.socket as net.Socket & { [CONN]?: Conn }
    let conn = s[CONN]
    if (conn === undefined) s[CONN] = conn = { busy: false, closing: false, queue: [] }
    if (conn.closing) return
    if (conn.busy) { conn.queue.push([req, res]); return }
    dispatch(req, res, extra, conn)
  }

  /**
   * An HTTP/1.1 request with `Upgrade` (node:http hands it over here, off its parser): a WebSocket
   * handshake goes to the upgrade route, which answers it through a response on the bare socket
   * (a refusal, or a plain answer) or takes the connection (TakeConnection); any other upgrade is
   * a plain request. The connection closes after an answer: it is no longer node:http's to reuse.
   */
  const onUpgrade = (extraOf: ((req: NodeReq) => [string, string]) | null) => (req: http.IncomingMessage, socket: net.Socket, head: Buffer): void => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    socket.on('error', () => { socket.destroy() })
    const res = new http.ServerResponse(req)
    res.shouldKeepAlive = false
    res.assignSocket(socket)
    let taken = false
    res.once('finish', () => { if (!taken) socket.end() })
    const extra = extraOf === null ? null : extraOf(req)
    const path = (req.url ?? '/').split('?', 1)[0]!
    const h = req.headers.upgrade?.toLowerCase() === 'websocket' ? upgradeRoute(path) : null
    if (h === null) { dispatch(req, res, extra, null); return }
    const gres = new NodeResponse(req, res, () => {})
    const take = (): net.Socket => {
      taken = true
      res.detachSocket(socket)
      // What the client sent past the head (frames sent before the 101) is read first.
      if (head.length > 0) socket.unshift(head)
      return socket
    }
    h(gres, new NodeRequest(req, extra, TLS_HOP_HEADER), null, take)
  }

  const onClientError = (err: Error & { code?: string }, socket: net.Socket): void => {
    if (!socket.writable || err.code === 'ECONNRESET') { socket.destroy(); return }
    const large = err.code === 'HPE_HEADER_OVERFLOW'
    o.logger.info({ peer: socket.remoteAddress, code: err.code }, `request refused by the HTTP layer: ${large ? 'head too large' : 'malformed request'}`)
    socket.end(large ? TOO_LARGE : refusal(err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? new AppError(408, 'request_timeout', 'The request head took too long to arrive.') : badRequest('The request is malformed.')))
  }

  const track = (server: http.Server | http2.Http2SecureServer): void => {
    servers.push(server)
    server.on('connection', (s: net.Socket) => { sockets.add(s); s.once('close', () => sockets.delete(s)) })
    server.on('clientError', onClientError)
  }

  const listenOn = async (server: http.Server | http2.Http2SecureServer, host: string, port: number, taken: () => Error): Promise<number> => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: Error & { code?: string }) => reject(err.code === 'EADDRINUSE' ? taken() : err))
      // exclusive: a port taken by anyone (even with SO_REUSEPORT) is refused, never shared.
      server.listen({ host, port, exclusive: true }, () => resolve())
    })
    const a = server.address()
    return typeof a === 'object' && a !== null ? a.port : port
  }

  return {
    name: 'node',
    async listen (host, port) {
      const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: 0, keepAliveTimeout: 10_000 }, onRequest(null))
      server.maxHeadersCount = MAX_HEADER_FIELDS + 1
      server.on('upgrade', onUpgrade(null))
      track(server)
      return await listenOn(server, host, port, () => portTaken(host, port))
    },
    async listenTls (t) {
      const requestCert = t.ca !== ''
      const server = http2.createSecureServer({
        allowHTTP1: true,
        cert: fs.readFileSync(t.cert),
        key: fs.readFileSync(t.key),
        ...(requestCert ? { ca: fs.readFileSync(t.ca), requestCert: true } : {}),
        // A missing or unknown client certificate must not end the handshake: profiles other than mtls call over TLS too.
        rejectUnauthorized: false,
        maxSessionMemory: 64,
        settings: { maxHeaderListSize: MAX_HEADER_BYTES }
      })
      server.on('session', (s: http2.Http2Session) => { sessions.add(s); s.once('close', () => sessions.delete(s)) })
      server.on('secureConnection', (s: TLSSocket) => { sockets.add(s); s.once('close', () => sockets.delete(s)) })
      // The stages read the certificate from the hop header the uWS mode's relay sends, made here in-process.
      const hop = (req: NodeReq): [string, string] => [TLS_HOP_HEADER, hopValue(o.hopSecret, certFingerprint(req.socket as TLSSocket, requestCert), peerAddress(req), 'https')]
      server.on('request', onRequest(hop))
      // HTTP/1.1 over TLS (ALPN http/1.1) upgrades as on PORT; HTTP/2 has no Upgrade (RFC 8441 is not offered).
      server.on('upgrade', onUpgrade(hop))
      track(server as unknown as http.Server)
      return await listenOn(server, t.host, t.port, () => new Error(`The gateway TLS port ${t.port} (TLS_PORT) on ${t.host} is already in use by another process: stop that process or choose another TLS_PORT.`))
    },
    stopListening () {
      for (const s of servers) s.close()
      for (const s of servers) if ('closeIdleConnections' in s) s.closeIdleConnections()
      for (const s of sessions) s.close()
    },
    close () {
      for (const s of sessions) s.destroy()
      for (const s of sockets) s.destroy()
    }
  }
}
