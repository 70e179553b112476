/**
 * Relay of answers that the gateway transforms before the client sees them: compressed, or kept
 * by the response cache. What the cache may keep, and compressible answers of announced length
 * up to COMPRESS_MAX_BYTES, are gathered whole (bounded) and written by sendWhole; other
 * compressible answers are compressed as they come (CompressStream), those of unannounced length
 * once they pass COMPRESSION_MIN_BYTES; the rest (not compressible,
 * not storable, no body) go to the plain Relay from their head on.
 *
 *   onHead ─┬─ neither applies ──────────────> Relay (as forward.ts)
 *           ├─ compress, longer than the bound ─> CompressStream
 *           └─ gather ─┬─ outgrows its bound ─> CompressStream or Relay, gathered chunks first
 *                      └─ onEnd ─> cache sink (store, collapsed waiters) ─> sendWhole (compress?)
 */
import type { GatewayExchange } from '../exchange.js'
import { cutReason, Relay } from '../forward.js'
import type { ResponseHead } from '../response-parser.js'
import type { ExchangeEvents, ExchangeFailure } from '../upstream.js'
import { COMPRESS_MAX_BYTES, compressibleHead } from './compression.js'
import { CompressStream } from './compress-stream.js'
import { sendWhole } from './whole-answer.js'

type Framing = 'none' | 'length' | 'chunked' | 'close'

export class GatherRelay implements ExchangeEvents {
  private chunks: Buffer[] = []
  private size = 0
  private limit = 0
  private head: ResponseHead | null = null
  private framing: Framing = 'none'
  private length = -1
  private compressing = false
  private plain: Relay | null = null
  private stream: CompressStream | null = null

  constructor (private readonly x: GatewayExchange, private readonly timeoutMs: number) {}

  onHead (h: ResponseHead, framing: Framing, length: number): void {
    const x = this.x
    if (x.aborted) return
    const compression = x.match!.route.compression
    x.status = h.status
    this.head = h
    this.framing = framing
    this.length = length
    const compressing = this.compressing = x.encoding !== null && compression !== null && framing !== 'none' && x.method !== 'HEAD' &&
      h.status >= 200 && h.status !== 204 && h.status !== 304 && (framing !== 'length' || length >= compression.minBytes) && compressibleHead(h.headers)
    const sink = x.cacheSink
    const storeLimit = sink !== null ? sink.accepts(h, framing, length) : -1
    if (storeLimit >= 0) { this.limit = storeLimit; return }
    if (!compressing) { this.toPlain(); return }
    if (framing === 'length' && length <= COMPRESS_MAX_BYTES) { this.limit = COMPRESS_MAX_BYTES; return }
    // Unannounced length: gathered up to the minimum (a shorter answer goes out whole, uncompressed), then compressed as it comes.
    if (framing !== 'length') { this.limit = compression!.minBytes; return }
    this.toStream()
  }

  onBody (chunk: Buffer): void {
    if (this.plain !== null) { this.plain.onBody(chunk); return }
    if (this.stream !== null) { this.stream.write(chunk); return }
    if (this.x.aborted) return
    this.size += chunk.length
    // Chunks are views of the upstream read buffer (valid during this call): gathered as copies.
    this.chunks.push(Buffer.from(chunk))
    if (this.size > this.limit) {
      // Too large to keep: what came so far, then the rest, as it comes.
      const gathered = this.chunks
      this.chunks = []
      if (this.compressing) { this.toStream(); for (const c of gathered) this.stream!.write(c) } else { this.toPlain(); for (const c of gathered) this.plain!.onBody(c) }
    }
  }

  onEnd (): void {
    if (this.plain !== null) { this.plain.onEnd(); return }
    if (this.stream !== null) { this.stream.end(); return }
    const x = this.x
    const upstreamMs = Math.round(performance.now() - x.upstreamStart)
    const h = this.head!
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size)
    this.chunks = []
    const memo = x.cacheSink?.store(h, body) ?? null
    if (x.aborted) { x.finish(x.match!.route.name, upstreamMs); return }
    sendWhole(x, { status: h.status, statusText: h.statusText, headers: h.headers, body }, upstreamMs, memo)
  }

  onError (kind: ExchangeFailure, err: Error): void {
    this.x.cacheSink?.decline()
    if (this.stream !== null) {
      this.x.warnFailure(this.x.status || 502, cutReason(kind), { kind, error: err.message })
      this.stream.cut()
      return
    }
    // Nothing written yet: the plain relay answers 502/504 (or cuts an aborted exchange short).
    this.plain ??= new Relay(this.x, this.timeoutMs)
    this.plain.onError(kind, err)
  }

  private toPlain (): void {
    this.x.cacheSink?.decline()
    this.plain = new Relay(this.x, this.timeoutMs)
    this.plain.onHead(this.head!, this.framing, this.length)
  }

  private toStream (): void {
    this.x.cacheSink?.decline()
    this.stream = new CompressStream(this.x, this.x.encoding!, this.head!)
  }
}
