/**
 * The gateway's TLS side (TLS_CERT, TLS_KEY, optional TLS_CA for client
 * certificates), in front of the same uWebSockets.js pipeline:
 *
 *   client ──TLS──▶ node:https (TLS_PORT) ──keep-alive HTTP/1.1 on loopback──▶ uWS listener (PORT)
 *                   │ reads the peer certificate          │ one header, x-gatehouse-tls:
 *                   │ once per connection                 │ "<secret> <fingerprint|-> <client ip>"
 *                   ◀──────────── answer streamed back ◀──┘ trusted only with this process's secret
 *
 * Why a hop and not uWS's own SSLApp: the uWS build in use exposes no client
 * certificate to JavaScript, so mtls profiles could never be checked there. The
 * hop keeps one pipeline (matching, auth, policies, validation, logs, metrics)
 * instead of a second copy for node:http; its cost is paid by TLS traffic only.
 * The secret is random per process and never leaves it; the uWS side drops the
 * header from every request, and honours it only when the secret matches.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { TLSSocket } from 'node:tls'
import { badGateway, errorBody } from '../../common/errors.js'
import type { Logger } from '../logger.js'

export const TLS_HOP_HEADER = 'x-gatehouse-tls'

/** What the hop header carries once its secret is checked. */
export interface TlsHop { fingerprint: string | null, remoteIp: string, proto: 'http' | 'https' }

/**
 * Verifies hop headers: returns the hop, or null when the header is forged or malformed.
 * A fourth word `http` marks a hop from the gateway MCP relaying a plain-HTTP caller.
 */
export function createHopVerifier (secret: string): (value: string) => TlsHop | null {
  return value => {
    const parts = value.split(' ')
    const [key = '', fingerprint = '', remoteIp = '', proto] = parts
    // Constant-time enough: the secret is compared in one go, and a forged value gains nothing from timing.
    if ((parts.length !== 3 && parts.length !== 4) || key.length !== secret.length || !safeEqual(key, secret)) return null
    return { fingerprint: fingerprint === '-' ? null : fingerprint, remoteIp, proto: proto === 'http' ? 'http' : 'https' }
  }
}

/** The hop header value for a caller (the TLS listener's relay, or the gateway MCP calling this gateway). */
export const hopValue = (secret: string, fingerprint: string | null | undefined, remoteIp: string, proto: 'http' | 'https'): string =>
  `${secret} ${fingerprint ?? '-'} ${remoteIp}${proto === 'http' ? ' http' : ''}`

function safeEqual (a: string, b: string): boolean {
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

export const newHopSecret = (): string => randomBytes(24).toString('hex')

/** Request headers that belong to the client connection, not to the hop. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'expect', 'http2-settings', TLS_HOP_HEADER])
const RESPONSE_DROP = new Set(['connection', 'keep-alive', 'transfer-encoding'])

export interface TlsListenerOptions {
  cert: string
  key: string
  ca: string
  host: string
  port: number
  /** Where the uWS listener can be reached from this process. */
  inner: () => { host: string, port: number }
  secret: string
  logger: Logger
}

export interface TlsListener {
  port: number
  /** Stops accepting connections and closes idle ones; requests under way go on. */
  stop (): void
  /** Closes every connection left. */
  close (): Promise<void>
}

const FINGERPRINT = Symbol('gatehouse.fingerprint')

/**
 * The client certificate's SHA-256 fingerprint ('-' for none): it counts only for a certificate
 * that chains to TLS_CA (and is in date). Read once per connection.
 */
export function certFingerprint (socket: TLSSocket, requestCert: boolean): string {
  const s = socket as TLSSocket & { [FINGERPRINT]?: string }
  if (s[FINGERPRINT] !== undefined) return s[FINGERPRINT]
  let fp = '-'
  if (requestCert && socket.authorized) {
    const cert = socket.getPeerCertificate()
    if (cert !== null && typeof cert.fingerprint256 === 'string') fp = cert.fingerprint256.replace(/:/g, '').toLowerCase()
  }
  s[FINGERPRINT] = fp
  return fp
}

export async function startTlsListener (o: TlsListenerOptions): Promise<TlsListener> {
  const requestCert = o.ca !== ''
  const server = https.createServer({
    cert: fs.readFileSync(o.cert),
    key: fs.readFileSync(o.key),
    ...(requestCert ? { ca: fs.readFileSync(o.ca), requestCert: true } : {}),
    // A missing or unknown client certificate must not end the handshake: profiles other than mtls call over TLS too.
    rejectUnauthorized: false
  })
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256 })

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket as TLSSocket
    const headers: http.OutgoingHttpHeaders = {}
    const raw = req.rawHeaders
    // rawHeaders is name, value pairs: i and i + 1 are in range.
    for (let i = 0; i < raw.length; i += 2) {
      const k = raw[i]!.toLowerCase()
      if (HOP_BY_HOP.has(k)) { if (k === 'transfer-encoding') headers[k] = 'chunked'; continue }
      const prev = headers[k]
      const v = raw[i + 1]!
      headers[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [String(prev), v]
    }
    headers[TLS_HOP_HEADER] = hopValue(o.secret, certFingerprint(socket, requestCert), socket.remoteAddress ?? '-', 'https')
    const { host, port } = o.inner()
    const hop = http.request({ host, port, method: req.method, path: req.url, headers, agent, setHost: false })
    let answered = false
    hop.on('response', (up: http.IncomingMessage) => {
      answered = true
      const out: string[] = []
      // rawHeaders is name, value pairs: i and i + 1 are in range.
      for (let i = 0; i < up.rawHeaders.length; i += 2) {
        if (!RESPONSE_DROP.has(up.rawHeaders[i]!.toLowerCase())) out.push(up.rawHeaders[i]!, up.rawHeaders[i + 1]!)
      }
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out)
      up.pipe(res)
      up.on('error', () => res.destroy())
    })
    hop.on('error', err => {
      if (res.writableFinished) return
      if (answered || res.headersSent) { res.destroy(); return }
      if (res.destroyed) return
      o.logger.warn({ err: err.message }, 'TLS listener could not reach the gateway listener')
      const rid = randomUUID()
      const body = JSON.stringify(errorBody(badGateway('The gateway is not ready; retry shortly.'), { request_id: rid }))
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': rid }).end(body)
    })
    // The client went away before the answer was complete: stop the hop (and, through it, the backend call).
    res.on('close', () => { if (!res.writableFinished) hop.destroy() })
    req.pipe(hop)
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => { server.off('error', reject); resolve() })
  })
  const address = server.address()
  let closed: Promise<void> | null = null
  const stop = () => {
    if (closed !== null) return
    closed = new Promise<void>(resolve => server.close(() => resolve()))
    server.closeIdleConnections()
  }
  return {
    port: typeof address === 'object' && address !== null ? address.port : o.port,
    stop,
    async close () {
      stop()
      server.closeAllConnections()
      await closed
      agent.destroy()
    }
  }
}
