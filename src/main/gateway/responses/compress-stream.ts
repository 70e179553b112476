/**
 * Compression of an answer as it comes (unannounced length, or too large to gather): the head
 * goes out at once with Content-Encoding, the body through a node:zlib stream (its work on the
 * thread pool), with backpressure both ways: zlib full pauses the backend, a slow client pauses
 * zlib's output.
 */
import zlib from 'node:zlib'
import type { GatewayExchange } from '../exchange.js'
import type { ResponseHead } from '../response-parser.js'
import { compressorOf, encodedHeaders, type Encoding } from './compression.js'

export class CompressStream {
  private readonly z: zlib.Gzip | zlib.BrotliCompress
  private failed = false

  constructor (private readonly x: GatewayExchange, enc: Encoding, h: ResponseHead) {
    const z = this.z = compressorOf(enc)
    x.res.cork(() => { x.writeHead(h.status, h.statusText, encodedHeaders(h.headers, enc), null) })
    z.on('data', (out: Buffer) => {
      if (x.aborted) return
      x.bytesOut += out.length
      let ok = true
      x.res.cork(() => { ok = x.res.write(out) })
      if (!ok) {
        z.pause()
        // The client took more: progress, while zlib (and so the backend) waits for it.
        x.res.onWritable(() => { x.upstream?.progress(); z.resume(); return true })
      }
    })
    z.on('drain', () => { x.upstream?.resume() })
    z.on('end', () => {
      if (!x.aborted) x.res.cork(() => { x.res.end() })
      x.finish(x.match!.route.name, Math.round(performance.now() - x.upstreamStart))
    })
    z.on('error', (err: Error) => {
      if (this.failed) return
      this.failed = true
      x.warnFailure(x.status, 'compression failed mid-answer: connection to the client cut', { error: err.message })
      this.cut()
    })
  }

  write (chunk: Buffer): void {
    if (this.failed) return
    // The chunk is a view of the upstream read buffer, reused by the next read: zlib gets a copy.
    if (!this.z.write(Buffer.from(chunk))) this.x.upstream?.pause()
  }

  end (): void { if (!this.failed) this.z.end() }

  /** The backend failed mid-answer: the client's connection is cut (its answer cannot be completed). */
  cut (): void {
    const x = this.x
    this.z.destroy()
    if (!x.aborted) x.res.cork(() => x.res.close())
    x.finish(x.match!.route.name)
  }
}
