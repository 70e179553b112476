/**
 * The writer of whole answers: a gathered backend answer, a cache hit, a workflow's answer.
 * Compressed on the thread pool when the client accepts an encoding, the route compresses and
 * the answer is worth it; the compressed bytes of a cache entry are kept beside it (`memo`), so a
 * hit compresses once per encoding, not once per request.
 */
import type { GatewayExchange } from '../exchange.js'
import { compress, compressibleHead, encodedHeaders, type Encoding } from './compression.js'

export interface WholeAnswer {
  status: number
  statusText: string
  /** Lower-case names; no Content-Length (the writer sets it). */
  headers: Array<[string, string]>
  body: Buffer
}

/** Encoded bodies of one stored answer, by encoding. */
export type EncodedMemo = Map<Encoding, Buffer>

export function sendWhole (x: GatewayExchange, a: WholeAnswer, upstreamMs: number | undefined, memo: EncodedMemo | null, defaultType: string | null = null): void {
  const enc = x.encoding
  const compression = x.match!.route.compression
  if (enc !== null && compression !== null && x.method !== 'HEAD' && a.body.length >= compression.minBytes && a.status >= 200 && a.status !== 204 && a.status !== 304 && compressibleHead(a.headers)) {
    const done = memo?.get(enc)
    if (done !== undefined) { write(x, a, done, enc, upstreamMs); return }
    compress(a.body, enc, (err, out) => {
      if (err !== null) { x.ctx.logger.warn({ err: err.message, request_id: x.rid }, 'compression failed; answered uncompressed'); write(x, a, a.body, null, upstreamMs, defaultType); return }
      memo?.set(enc, out)
      write(x, a, out, enc, upstreamMs)
    })
    return
  }
  write(x, a, a.body, null, upstreamMs, defaultType)
}

function write (x: GatewayExchange, a: WholeAnswer, body: Buffer, enc: Encoding | null, upstreamMs: number | undefined, defaultType: string | null = null): void {
  const name = x.match!.route.name
  if (x.aborted) { x.finish(name, upstreamMs); return }
  x.status = a.status
  x.bytesOut = body.length
  x.res.cork(() => {
    x.writeHead(a.status, a.statusText, enc === null ? a.headers : encodedHeaders(a.headers, enc), defaultType)
    if (x.method === 'HEAD') x.res.endWithoutBody(body.length)
    else x.res.end(body)
  })
  x.finish(name, upstreamMs)
}
