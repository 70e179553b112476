/**
 * WebSocket framing (RFC 6455) for the gateway's side of a backend connection: frames it sends
 * are masked (a client's must be), frames it reads are not. The reader gathers fragments into
 * whole messages and hands control frames on as they come.
 *
 *   byte 0: FIN(1) RSV(3) opcode(4)   byte 1: MASK(1) len(7) [+16 or +64 bit length] [mask key] payload
 */
import { randomBytes } from 'node:crypto'

export const OP_CONT = 0
export const OP_TEXT = 1
export const OP_BINARY = 2
export const OP_CLOSE = 8
export const OP_PING = 9
export const OP_PONG = 10

/** One masked frame with FIN set. */
export function encodeFrame (opcode: number, payload: Uint8Array): Buffer {
  const n = payload.length
  const lenBytes = n < 126 ? 0 : n < 65536 ? 2 : 8
  const frame = Buffer.allocUnsafe(2 + lenBytes + 4 + n)
  frame[0] = 0x80 | opcode
  if (lenBytes === 0) frame[1] = 0x80 | n
  else if (lenBytes === 2) { frame[1] = 0x80 | 126; frame.writeUInt16BE(n, 2) } else { frame[1] = 0x80 | 127; frame.writeBigUInt64BE(BigInt(n), 2) }
  const maskAt = 2 + lenBytes
  randomBytes(4).copy(frame, maskAt)
  // i < n = payload.length, and the frame holds the 4-byte mask then n bytes.
  for (let i = 0; i < n; i++) frame[maskAt + 4 + i] = payload[i]! ^ frame[maskAt + (i & 3)]!
  return frame
}

/** A close frame's payload: the code, then the reason. */
export function closePayload (code: number, reason: Uint8Array): Buffer {
  const p = Buffer.allocUnsafe(2 + reason.length)
  p.writeUInt16BE(code, 0)
  p.set(reason, 2)
  return p
}

export interface FrameEvents {
  onMessage (data: Buffer, isBinary: boolean): void
  onPing (data: Buffer): void
  onClose (code: number, reason: Buffer): void
  onError (message: string): void
}

/** Reads the backend's frames from its byte stream (chunks of any size). */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0)
  // Chunks of a frame still incomplete, joined once it is whole (joining on every read would copy a large frame over and over).
  private waiting: Buffer[] = []
  private waitingLength = 0
  private need = 0
  private parts: Buffer[] = []
  private partsLength = 0
  private partsBinary = false
  private failed = false

  constructor (private readonly events: FrameEvents, private readonly maxMessage: number) {}

  push (chunk: Buffer): void {
    if (this.failed) return
    if (this.need > 0) {
      this.waiting.push(Buffer.from(chunk))
      this.waitingLength += chunk.length
      if (this.waitingLength < this.need) return
      this.buf = Buffer.concat(this.waiting, this.waitingLength)
      this.waiting = []
      this.waitingLength = 0
      this.need = 0
    } else this.buf = this.buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk])
    while (this.buf.length >= 2) {
      const b0 = this.buf[0]! // length >= 2
      const b1 = this.buf[1]!
      const opcode = b0 & 0x0f
      const masked = (b1 & 0x80) !== 0
      let len = b1 & 0x7f
      let at = 2
      if (len === 126) { if (this.buf.length < 4) return; len = this.buf.readUInt16BE(2); at = 4 } else if (len === 127) {
        if (this.buf.length < 10) return
        const big = this.buf.readBigUInt64BE(2)
        if (big > BigInt(this.maxMessage)) { this.fail('the backend sent a WebSocket frame larger than the gateway relays'); return }
        len = Number(big); at = 10
      }
      if (len > this.maxMessage) { this.fail('the backend sent a WebSocket frame larger than the gateway relays'); return }
      const maskAt = at
      if (masked) at += 4
      if (this.buf.length < at + len) {
        this.need = at + len
        this.waiting = [this.buf]
        this.waitingLength = this.buf.length
        this.buf = Buffer.alloc(0)
        return
      }
      const payload = Buffer.from(this.buf.subarray(at, at + len))
      // i < len = payload.length; the 4-byte mask is within buf (at >= maskAt + 4).
      if (masked) for (let i = 0; i < len; i++) payload[i]! ^= this.buf[maskAt + (i & 3)]!
      this.buf = this.buf.subarray(at + len)
      this.frame((b0 & 0x80) !== 0, opcode, payload)
      if (this.failed) return
    }
  }

  private frame (fin: boolean, opcode: number, payload: Buffer): void {
    if (opcode === OP_PING) { this.events.onPing(payload); return }
    if (opcode === OP_PONG) return
    if (opcode === OP_CLOSE) { this.events.onClose(payload.length >= 2 ? payload.readUInt16BE(0) : 1005, payload.subarray(2)); return }
    if (opcode === OP_TEXT || opcode === OP_BINARY) { this.parts = []; this.partsLength = 0; this.partsBinary = opcode === OP_BINARY } else if (opcode !== OP_CONT) { this.fail(`the backend sent an unknown WebSocket opcode ${opcode}`); return }
    this.parts.push(payload)
    this.partsLength += payload.length
    if (this.partsLength > this.maxMessage) { this.fail('the backend sent a WebSocket message larger than the gateway relays'); return }
    if (!fin) return
    const message = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partsLength)
    this.parts = []
    this.partsLength = 0
    this.events.onMessage(message, this.partsBinary)
  }

  private fail (message: string): void { this.failed = true; this.events.onError(message) }
}
