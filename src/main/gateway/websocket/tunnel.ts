/**
 * The node layer's WebSocket relay once the backend said 101: the client's connection and the
 * backend's are joined byte for byte, each piped into the other, so a slow reader on either side
 * stops the other side's reads (stream backpressure: at most a socket's buffer is held each way,
 * no cap and no re-framing). Frames pass as the peers made them (extensions, masks, close codes).
 *
 *   client socket ──pipe──> backend socket        (FrameScanner on each direction: byte counts,
 *   client socket <──pipe── backend socket         and whether that side sent its close frame)
 *
 * A side that goes away without its close frame has one sent on its behalf, as the uWS relay
 * does: the client hears 1011 from a cut backend, the backend an empty close from a vanished
 * client. No idle timeout (the uWS relay has none either). One request-log record, status 101,
 * when both connections are closed.
 */
import type { Duplex } from 'node:stream'
import type net from 'node:net'
import type { GatewayExchange } from '../exchange.js'
import { closePayload, encodeFrame, OP_CLOSE } from './frames.js'

/** Follows the frame headers of one direction without copying payloads: is a frame open, was a close frame sent. */
export class FrameScanner {
  closed = false
  /** Payload bytes of the current frame still to come. */
  private left = 0
  /** The current frame's header bytes so far (at most 14: 2, a 64-bit length, a mask key). */
  private readonly head = new Uint8Array(14)
  private got = 0

  get atBoundary (): boolean { return this.left === 0 && this.got === 0 }

  push (chunk: Uint8Array): void {
    const h = this.head
    let i = 0
    while (i < chunk.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, chunk.length - i)
        this.left -= n
        i += n
        continue
      }
      h[this.got++] = chunk[i++]!
      if (this.got < 2) continue
      const len7 = h[1]! & 0x7f
      const need = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + ((h[1]! & 0x80) !== 0 ? 4 : 0)
      if (this.got < need) continue
      let len = len7
      if (len7 === 126) len = (h[2]! << 8) | h[3]!
      else if (len7 === 127) { len = 0; for (let k = 2; k < 10; k++) len = len * 256 + h[k]! }
      if ((h[0]! & 0x0f) === OP_CLOSE) this.closed = true
      this.left = len
      this.got = 0
    }
  }
}

/** An unmasked close frame (server to client). */
function serverClose (code: number, reason: string): Buffer {
  const payload = closePayload(code, Buffer.from(reason))
  return Buffer.concat([Buffer.from([0x80 | OP_CLOSE, payload.length]), payload])
}

export function startTunnel (x: GatewayExchange, client: Duplex, backend: net.Socket, head101: string, early: Buffer, release: () => void): void {
  const route = x.match!.route
  x.status = 101
  const fromClient = new FrameScanner()
  const fromBackend = new FrameScanner()
  // No idle timeout on a session: keep-alive timers node:http may have set on this connection are cleared.
  ;(client as net.Socket).setTimeout?.(0)
  ;(client as net.Socket).setNoDelay?.(true)
  client.write(`${head101}x-request-id: ${x.rid}\r\n\r\n`, 'latin1')
  if (early.length > 0) { x.bytesOut += early.length; fromBackend.push(early); client.write(early) }
  client.on('data', (c: Buffer) => { x.bytesIn += c.length; fromClient.push(c) })
  backend.on('data', (c: Buffer) => { x.bytesOut += c.length; fromBackend.push(c) })
  client.pipe(backend, { end: false })
  backend.pipe(client, { end: false })
  backend.resume()

  let gone = 0
  const over = (): void => {
    if (++gone < 2) return
    release()
    x.finish(route.name, Math.round(performance.now() - x.upstreamStart))
  }
  /** One side ended or failed: the other is told (its close frame made up when the side sent none) and ended. */
  const ended = (side: 'client' | 'backend'): void => {
    const other = side === 'client' ? backend : client
    const scan = side === 'client' ? fromClient : fromBackend
    if (other.writableEnded || other.destroyed) return
    if (!scan.closed && scan.atBoundary) other.write(side === 'client' ? encodeFrame(OP_CLOSE, Buffer.alloc(0)) : serverClose(1011, 'the backend connection closed'))
    other.end()
    setTimeout(() => other.destroy(), 5000).unref()
  }
  client.on('error', () => { client.destroy() })
  backend.on('error', () => { backend.destroy() })
  client.once('end', () => { ended('client') })
  backend.once('end', () => { ended('backend') })
  client.once('close', () => { ended('client'); over() })
  backend.once('close', () => { ended('backend'); over() })
}
