/**
 * The boundary between the gateway's request path and the HTTP layer under it. The stages
 * (exchange, body, forward, the MCP and portal routes) speak only these interfaces, whose
 * methods are uWebSockets.js's own names and semantics: uWS's `HttpResponse`/`HttpRequest`
 * satisfy them as they are, so the uWS layer passes its objects straight through (no wrapper,
 * nothing allocated per request), and the node layer (node:http, node:http2) implements them.
 *
 *   HTTP layer ──(res: GatewayResponse, req: GatewayRequest)──> route handler ──> stages
 *     uws:  uWS.App, SO_REUSEPORT off for strangers (LIBUS_LISTEN_EXCLUSIVE_PORT)
 *     node: node:http (HTTP/1.0, 1.1), node:http2 with allowHTTP1 on TLS_PORT
 */

import type { Duplex } from 'node:stream'

/** What a body, header or chunk may be (uWS's RecognizedString). */
export type Chunk = string | ArrayBuffer | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array

/**
 * One response, valid until it ends or aborts. Writes made outside the handler's own call
 * belong inside `cork`. Semantics are uWS's: `write` returns false when the chunk was queued
 * (wait for `onWritable`), `tryEnd` returns [ok, done], `onData` chunks are views valid only
 * during the call, `pause`/`resume` stop and restart reading the request body.
 */
export interface GatewayResponse {
  /** Called once if the client goes away before the response ends; must be set before any await. */
  onAborted (handler: () => void): GatewayResponse
  /** The request body, chunk by chunk; the last call has isLast = true (a bodiless request gets one empty last chunk). */
  onData (handler: (chunk: ArrayBuffer, isLast: boolean) => void): GatewayResponse
  pause (): void
  resume (): void
  /** Runs `cb` with writes batched into one send. */
  cork (cb: () => void): GatewayResponse
  /** '200 OK', or a bare '200'. */
  writeStatus (status: Chunk): GatewayResponse
  writeHeader (key: Chunk, value: Chunk): GatewayResponse
  /** False when the chunk could not be sent at once (it is kept): wait for onWritable. */
  write (chunk: Chunk): boolean
  end (body?: Chunk, closeConnection?: boolean): GatewayResponse
  /** Ends a response that has no body (HEAD, 204, 304), optionally announcing a Content-Length. */
  endWithoutBody (reportedContentLength?: number, closeConnection?: boolean): GatewayResponse
  /** Writes part of a body of known total size; [sent at once, response complete]. */
  tryEnd (fullBodyOrChunk: Chunk, totalSize: number): [boolean, boolean]
  /** Body bytes handed to the connection so far (the offset onWritable's handler resumes from). */
  getWriteOffset (): number
  /** Called when the connection can take more; return true when done waiting. */
  onWritable (handler: (offset: number) => boolean): GatewayResponse
  /** Cuts the connection at once. */
  close (): GatewayResponse
  /** The peer's address as text (an ArrayBuffer of it, as uWS gives it). */
  getRemoteAddressAsText (): ArrayBuffer
  /** The peer's address as bytes: 4 (IPv4) or 16 (IPv6); empty when the layer has only its text. */
  getRemoteAddress (): ArrayBuffer
}

/** The request head, valid only during the route handler's call: copy what is needed at once. */
export interface GatewayRequest {
  getCaseSensitiveMethod (): string
  /** The path, without the query. */
  getUrl (): string
  /** The query string without '?', or ''/undefined when absent. */
  getQuery (): string | undefined
  /** A header by lower-case name ('' when absent). */
  getHeader (lowerCaseKey: string): string
  /** Every header, names in lower case, in the order received. */
  forEach (cb: (key: string, value: string) => void): void
}

export type HttpHandler = (res: GatewayResponse, req: GatewayRequest) => void

/**
 * A WebSocket the HTTP layer accepted, towards the client (uWS's WebSocket as it is). `send`
 * answers 1 (sent), 0 (queued: wait for the session's onDrain) or 2 (dropped: over the limit).
 */
export interface GatewaySocket {
  send (message: Chunk, isBinary: boolean): number
  /** Closes with a close frame (code, reason). */
  end (code?: number, reason?: Chunk): void
  getBufferedAmount (): number
}

/** What a WebSocket's events go to, from the moment the layer opens it. */
export interface SocketSession {
  onOpen (socket: GatewaySocket): void
  /** `message` is valid only during the call. */
  onMessage (message: ArrayBuffer, isBinary: boolean): void
  /** The client took what was queued. */
  onDrain (): void
  /** The client side is closed (its close frame, or the connection gone). */
  onClose (code: number, reason: ArrayBuffer): void
}

/**
 * Completes a WebSocket handshake that `UpgradeHandler` chose to accept (also later, from another
 * callback): the 101 with the sub-protocol given, then events to `session`.
 */
export type AcceptUpgrade = (session: SocketSession, protocol: string | null) => void

/**
 * The node layer's way to accept: the client's connection itself, handed over (detached from the
 * HTTP parser, with any bytes read past the head put back). The relay writes the backend's 101 on
 * it and then relays bytes as they are, with the streams' own backpressure.
 */
export type TakeConnection = () => Duplex

/**
 * An `Upgrade: websocket` request: answer it like any request (`res`), or accept it: with
 * `accept` on the uWS layer (it speaks WebSocket to the client), with `take` on the node layer.
 */
export type UpgradeHandler = (res: GatewayResponse, req: GatewayRequest, accept: AcceptUpgrade | null, take: TakeConnection | null) => void

/**
 * Routes on the gateway listener: exact paths, or prefixes written `/prefix/*`, matched before
 * the catch-all `/*` (the longest prefix wins). Registered before listen.
 */
export interface RouteRegistrar {
  get (pattern: string, handler: HttpHandler): void
  any (pattern: string, handler: HttpHandler): void
  /** WebSocket upgrade requests on the pattern (registered with `any` for the same pattern, which serves the rest). */
  upgrade (pattern: string, handler: UpgradeHandler): void
}

export type Route = { method: 'get' | 'any', pattern: string, handler: HttpHandler } | { method: 'upgrade', pattern: string, handler: UpgradeHandler }

/** One HTTP layer serving the registered routes. */
export interface HttpLayer {
  readonly name: 'uws' | 'node'
  /**
   * Listens on host:port (0: any free port) and resolves to the port; rejects when the port is taken.
   * `shared` (uws, GATEWAY_THREADS > 1): with SO_REUSEPORT, beside this process's other gateway
   * threads; the port was checked free with an exclusive bind first (probeFreePort).
   */
  listen (host: string, port: number, shared?: boolean): Promise<number>
  /** Stops accepting connections; requests under way go on. */
  stopListening (): void
  /** Closes every connection left. */
  close (): void
}

/** The one line a start on a taken gateway port ends with (both layers). */
export const portTaken = (host: string, port: number): Error =>
  new Error(`The gateway port ${port} (PORT) on ${host} is already in use by another process: stop that process or choose another PORT.`)
