/**
 * The `/mcp` route on the gateway listener: a web-standard Request built from
 * the uWS request, handed to the gateway MCP, its Response written back.
 * Registered as its own uWS route beside the catch-all, so ordinary gateway
 * traffic never looks at it (uWS matches the static path before the wildcard).
 */
import { randomUUID } from 'node:crypto'
import type uWS from 'uWebSockets.js'
import { errorBody, payloadTooLarge } from '../../common/errors.js'
import type { Logger } from '../logger.js'
import type { McpPeer } from '../mcp/gateway-mcp.js'
import { hopValue, TLS_HOP_HEADER, type TlsHop } from './tls-listener.js'

export const MCP_PATH = '/mcp'

export type McpHandler = (req: Request, peer: McpPeer) => Promise<Response>

export interface McpRouteOptions {
  handler: McpHandler
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

export function registerMcpRoute (app: uWS.TemplatedApp, o: McpRouteOptions): void {
  app.any(MCP_PATH, (res, req) => {
    o.begin()
    let aborted = false
    let finished = false
    const finish = () => { if (!finished) { finished = true; o.end() } }
    res.onAborted(() => { aborted = true; finish() })

    // Copied at once: the uWS request is invalid after this callback.
    const method = req.getCaseSensitiveMethod()
    const query = req.getQuery()
    const headers = new Headers()
    let hop: TlsHop | null = null
    req.forEach((k, v) => {
      if (k === TLS_HOP_HEADER) { hop = o.verifyHop(v); return }
      headers.append(k, v)
    })
    const h = hop as TlsHop | null
    const remoteIp = h?.remoteIp ?? Buffer.from(res.getRemoteAddressAsText()).toString()
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
    const run = (body: Buffer | null) => {
      let url: string
      try { url = new URL(`${proto}://${headers.get('host') ?? 'localhost'}${MCP_PATH}${query ? `?${query}` : ''}`).toString() } catch { url = `${proto}://localhost${MCP_PATH}` }
      const request = new Request(url, { method, headers, body: body === null || method === 'GET' || method === 'HEAD' ? undefined : body })
      const peer: McpPeer = {
        remoteIp, certFingerprint: h?.fingerprint ?? undefined, requestId,
        self: { origin: o.selfOrigin(), hop: [TLS_HOP_HEADER, hopValue(o.hopSecret, h?.fingerprint, remoteIp, proto)] }
      }
      o.handler(request, peer)
        .then(async r => { answer(r, await r.arrayBuffer()) })
        .catch((err: unknown) => {
          o.logger.error({ err, request_id: requestId }, 'gateway MCP request failed')
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
