/**
 * Fixed routes on the gateway listener that are not gateway traffic (the gateway MCP at `/mcp`,
 * the developer-portal assistant): a web-standard Request built from the request head, handed to
 * a handler, its Response written back (streamed as it comes when it is text/event-stream).
 * Registered as their own routes beside the catch-all, so ordinary gateway traffic never
 * looks at them (a static path is matched before the wildcard).
 */
import { randomUUID } from 'node:crypto'
import { errorBody, payloadTooLarge } from '../../common/errors.js'
import type { Logger } from '../logger.js'
import type { RouteRegistrar } from './http/types.js'
import type { TrustedProxies } from './trusted-proxies.js'
import { hopValue, TLS_HOP_HEADER, type TlsHop } from './tls-listener.js'
import { peerAddress } from './http/peer-address.js'

export const MCP_PATH = '/mcp'

/** The caller of one web-route request (/mcp, the portal assistant), as the gateway listener saw it. */
export interface McpPeer {
  remoteIp: string
  certFingerprint?: string
  requestId: string
  /** Where this gateway answers on loopback, and the signed hop header that carries the caller's address and certificate. */
  self: { origin: string, hop: [string, string] }
}

export type WebHandler = (req: Request, peer: McpPeer) => Promise<Response>

export interface WebRouteOptions {
  trusted: TrustedProxies
  logger: Logger
  maxBodyBytes: number
  verifyHop: (value: string) => TlsHop | null
  hopSecret: string
  /** Where this listener answers on loopback (known once it listens). */
  selfOrigin: () => string
  /** In-flight accounting, so a shutdown waits for MCP calls too. */
  begin: () => void
  end: () => void
}

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/
const DROP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

export function registerWebRoute (app: RouteRegistrar, path: string, handler: WebHandler, o: WebRouteOptions): void {
  app.any(path, (res, req) => {
    o.begin()
    let aborted = false
    let finished = false
    const finish = () => { if (!finished) { finished = true; o.end() } }
    res.onAborted(() => { aborted = true; finish() })

    // Copied at once: the request head is invalid after this callback.
    const method = req.getCaseSensitiveMethod()
    const query = req.getQuery()
    const headers = new Headers()
    let hop: TlsHop | null = null
    req.forEach((k, v) => {
      if (k === TLS_HOP_HEADER) { hop = o.verifyHop(v); return }
      headers.append(k, v)
    })
    const h = hop as TlsHop | null
    const peerIp = h?.remoteIp ?? peerAddress(res)
    const remoteIp = o.trusted.clientAddress(peerIp, headers.get('x-forwarded-for'))
    const proto = h?.proto ?? 'http'
    const given = headers.get('x-request-id')
    const requestId = given !== null && REQUEST_ID.test(given) ? given : randomUUID()

    const answer = (r: Response, body: ArrayBuffer | string, close = false) => {
      if (aborted || finished) return
      res.cork(() => {
        res.writeStatus(String(r.status))
        r.headers.forEach((v, k) => { if (!DROP.has(k)) res.writeHeader(k, v) })
        res.end(body, close)
      })
      finish()
    }
    // Event streams are written chunk by chunk; a client gone cancels the handler's stream.
    const stream = async (r: Response) => {
      if (aborted || finished) { await r.body!.cancel().catch(() => {}); return }
      res.cork(() => {
        res.writeStatus(String(r.status))
        r.headers.forEach((v, k) => { if (!DROP.has(k)) res.writeHeader(k, v) })
      })
      const reader = r.body!.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (aborted) { await reader.cancel().catch(() => {}); break }
        if (done) { res.cork(() => { res.end() }); break }
        res.cork(() => { res.write(value) })
      }
      finish()
    }
    const run = (body: Buffer | null) => {
      let url: string
      try { url = new URL(`${proto}://${headers.get('host') ?? 'localhost'}${path}${query ? `?${query}` : ''}`).toString() } catch { url = `${proto}://localhost${path}` }
      const request = new Request(url, { method, headers, body: body === null || method === 'GET' || method === 'HEAD' ? undefined : body })
      const peer: McpPeer = {
        remoteIp, certFingerprint: h?.fingerprint ?? undefined, requestId,
        self: { origin: o.selfOrigin(), hop: [TLS_HOP_HEADER, hopValue(o.hopSecret, h?.fingerprint, remoteIp, proto)] }
      }
      handler(request, peer)
        .then(async r => {
          if (r.body !== null && (r.headers.get('content-type') ?? '').startsWith('text/event-stream')) await stream(r)
          else answer(r, await r.arrayBuffer())
        })
        .catch((err: unknown) => {
          o.logger.error({ err, request_id: requestId, path }, 'gateway listener route failed')
          const r = new Response(null, { status: 500, headers: { 'content-type': 'application/json', 'x-request-id': requestId } })
          answer(r, JSON.stringify({ error: { code: 'internal_error', message: 'An internal error occurred; it has been logged.' }, request_id: requestId }))
        })
    }

    if (method !== 'POST') { run(null); return }
    const chunks: Buffer[] = []
    let size = 0
    res.onData((ab, last) => {
      if (finished) return
      size += ab.byteLength
      if (size > o.maxBodyBytes) {
        const err = payloadTooLarge(`The MCP message is larger than ${o.maxBodyBytes} bytes.`)
        const r = new Response(null, { status: 413, headers: { 'content-type': 'application/json', 'x-request-id': requestId } })
        answer(r, JSON.stringify(errorBody(err, { request_id: requestId })), true)
        return
      }
      // The chunk's memory is reused after this callback: copy it.
      chunks.push(Buffer.from(ab.slice(0)))
      if (last) run(Buffer.concat(chunks, size))
    })
  })
}
