/**
 * The uWebSockets.js HTTP layer (the default): one uWS app with the registered routes. uWS's
 * own response and request objects are handed to the handlers as they are (they satisfy
 * GatewayResponse and GatewayRequest), so this layer adds nothing per request.
 */
import { createRequire } from 'node:module'
import type uWS from 'uWebSockets.js'
import { portTaken, type GatewayRequest, type GatewayResponse, type HttpLayer, type Route, type SocketSession, type UpgradeHandler } from './types.js'

// Compile-time proof that uWS's objects are the boundary's, unwrapped.
export const asBoundary = (res: uWS.HttpResponse, req: uWS.HttpRequest): [GatewayResponse, GatewayRequest] => [res, req]

export function createUwsLayer (routes: readonly Route[]): HttpLayer {
  // Loaded here, not at import: a service in node mode never loads the native binary.
  const u = createRequire(import.meta.url)('uWebSockets.js') as typeof uWS
  const app = u.App()
  for (const r of routes) {
    if (r.method === 'upgrade') app.ws(r.pattern, upgradeBehavior(r.handler))
    else app[r.method](r.pattern, r.handler)
  }
  let listenSocket: uWS.us_listen_socket | null = null
  return {
    name: 'uws',
    async listen (host, port, shared = false) {
      return await new Promise<number>((resolve, reject) => {
        // Exclusive: without it uWS sets SO_REUSEPORT and a second process on a taken port starts
        // silently and gets part of the traffic (the typings lack this overload; the binary has it).
        const listen = app.listen as unknown as (h: string, p: number, o: number, cb: (ls: uWS.us_listen_socket | false) => void) => void
        // Shared: SO_REUSEPORT, so the kernel spreads connections over the threads listening here.
        listen.call(app, host, port, shared ? 0 : (u as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT, ls => {
          if (ls === false) { reject(portTaken(host, port)); return }
          listenSocket = ls
          resolve(u.us_socket_local_port(ls))
        })
      })
    },
    stopListening () {
      if (listenSocket !== null) { u.us_listen_socket_close(listenSocket); listenSocket = null }
    },
    close () { app.close() }
  }
}

/** Largest WebSocket message either way (uWS's default is 16 KiB). */
export const MAX_WS_MESSAGE = 16 * 1024 * 1024
/** Bytes queued towards a WebSocket client past which uWS closes it rather than buffer more. */
const MAX_WS_BACKPRESSURE = 64 * 1024 * 1024

interface WsData { session: SocketSession }

/** uWS's WebSocket server: the handler decides; an accepted socket's events go to its session. */
function upgradeBehavior (handler: UpgradeHandler): uWS.WebSocketBehavior<WsData> {
  return {
    maxPayloadLength: MAX_WS_MESSAGE,
    maxBackpressure: MAX_WS_BACKPRESSURE,
    closeOnBackpressureLimit: 1,
    idleTimeout: 0,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      // What the 101 needs from the request, copied now: req is gone after this call.
      const key = req.getHeader('sec-websocket-key')
      const extensions = req.getHeader('sec-websocket-extensions')
      handler(res, req, (session, protocol) => {
        res.cork(() => { res.upgrade<WsData>({ session }, key, protocol ?? '', extensions, context) })
      }, null)
    },
    open: ws => { ws.getUserData().session.onOpen(ws) },
    message: (ws, message, isBinary) => { ws.getUserData().session.onMessage(message, isBinary) },
    drain: ws => { ws.getUserData().session.onDrain() },
    close: (ws, code, reason) => { ws.getUserData().session.onClose(code, reason) }
  }
}

/**
 * Before gateway threads share a port (SO_REUSEPORT): an exclusive bind proves that no other
 * process holds it (a socket without SO_REUSEPORT cannot join one with it, nor the reverse), and
 * turns port 0 into a concrete port every thread can listen on (libus sets SO_REUSEPORT only for
 * a given port). Resolves to the port, rejects with the one-line portTaken error.
 */
export async function probeFreePort (host: string, port: number): Promise<number> {
  const net = await import('node:net')
  return await new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', (err: NodeJS.ErrnoException) => { reject(err.code === 'EADDRINUSE' ? portTaken(host, port) : err) })
    probe.listen({ host, port, exclusive: true }, () => {
      const got = (probe.address() as import('node:net').AddressInfo).port
      probe.close(() => { resolve(got) })
    })
  })
}
