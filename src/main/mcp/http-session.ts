/**
 * One MCP request over streamable HTTP, with sessions shared between instances:
 *
 *   POST initialize ──▶ fresh SDK server + stateless transport ──▶ answer + Mcp-Session-Id (stored in the registry)
 *                       (503 + Retry-After when the instance holds MCP_SESSIONS_MAX live sessions)
 *   POST other      ──▶ session checked (owner, idle expiry) ──▶ fresh server + transport ──▶ answer
 *   DELETE          ──▶ session ended (204), or 404 when unknown
 *   GET             ──▶ 405: these servers send nothing unprompted
 *
 * A fresh server per request keeps no state in the process, so an instance that
 * never saw the initialize serves the session as well as the one that did.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import type { McpSessions } from './sessions.js'

export const MCP_SESSION_HEADER = 'mcp-session-id'

export interface McpHttpOptions {
  /** Who is calling (the session must belong to them). */
  owner: string
  sessions: McpSessions
  /** A server with its handlers, for this one request. */
  build: () => Server
  /**
   * Answer as Server-Sent Events (default: one JSON answer). Needed for notifications sent while a
   * request runs, such as progress of a streaming tool.
   */
  stream?: boolean
}

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'content-type': 'application/json', ...headers } })

export async function serveMcpRequest (req: Request, o: McpHttpOptions): Promise<Response> {
  const sid = req.headers.get(MCP_SESSION_HEADER)
  if (req.method === 'DELETE') {
    if (sid === null) return rpcError(400, -32000, 'Send the Mcp-Session-Id header of the session to end.')
    // Another owner's session is answered as unknown: a session id alone reveals nothing.
    if (await o.sessions.use(sid, o.owner) === undefined) return rpcError(404, -32001, 'Session not found; it has ended or expired.')
    await o.sessions.close(sid)
    return new Response(null, { status: 204 })
  }
  if (req.method !== 'POST') {
    return rpcError(405, -32000, 'This MCP endpoint answers POST (JSON-RPC messages) and DELETE (end a session); it sends no server-initiated stream.', { allow: 'POST, DELETE' })
  }
  let parsed: unknown
  try { parsed = await req.json() } catch { return rpcError(400, -32700, 'Parse error: the body is not JSON.') }
  const messages = Array.isArray(parsed) ? parsed : [parsed]
  const init = messages.find(m => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize') as { params?: { protocolVersion?: unknown } } | undefined
  if (init !== undefined && !await o.sessions.hasRoom()) {
    return rpcError(503, -32000, 'This server holds as many MCP sessions as it may (MCP_SESSIONS_MAX); sessions already open keep working. Retry later, or end unused sessions (DELETE with Mcp-Session-Id).', { 'retry-after': '30' })
  }
  if (init === undefined) {
    if (sid === null) return rpcError(400, -32000, 'Send the Mcp-Session-Id header from the initialize answer (or initialize first).')
    const session = await o.sessions.use(sid, o.owner)
    if (session === undefined) return rpcError(404, -32001, 'Session not found; it has ended or expired. Initialize a new one.')
    // Any version the SDK supports is accepted, as its own transport does (a client may open
    // streams that announce another supported version than the session negotiated).
    const version = req.headers.get('mcp-protocol-version')
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return rpcError(400, -32000, `Bad Request: unsupported protocol version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`)
    }
  }

  const server = o.build()
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: o.stream !== true })
  await server.connect(transport)
  let res: Response
  try {
    res = await transport.handleRequest(req, { parsedBody: parsed })
  } catch (err) {
    await server.close().catch(() => {})
    throw err
  }
  const headers = new Headers(res.headers)
  if (init !== undefined && res.status === 200) {
    // The version the SDK server answered with: the client's when supported, else the latest.
    const asked = init.params?.protocolVersion
    const version = typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION
    const { id } = await o.sessions.open(o.owner, version)
    headers.set(MCP_SESSION_HEADER, id)
  }
  // A streamed answer is written while the handlers run: the server closes when the stream ends.
  const source = res.body
  if (source === null) { await server.close().catch(() => {}); return new Response(null, { status: res.status, headers }) }
  const reader = source.getReader()
  const close = async () => { await server.close().catch(() => {}) }
  const body = new ReadableStream<Uint8Array>({
    async pull (controller) {
      const { done, value } = await reader.read()
      if (done) { controller.close(); await close() } else controller.enqueue(value)
    },
    async cancel (reason) { await reader.cancel(reason).catch(() => {}); await close() }
  })
  return new Response(body, { status: res.status, headers })
}
