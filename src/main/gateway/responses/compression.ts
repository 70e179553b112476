/**
 * Response compression: the encoding a client accepts (gzip or Brotli by Accept-Encoding and its
 * q-values), what is worth compressing, and the compression itself on libuv's thread pool
 * (node:zlib's asynchronous calls), never on the event loop.
 */
import zlib from 'node:zlib'

export type Encoding = 'br' | 'gzip'

/** A route's compression (null on the route when COMPRESSION=off, the proxy says false, or it streams). */
export interface CompiledCompression { minBytes: number }

// Brotli's default quality (11) is meant for static files: about 30x gzip's CPU. 4 compresses
// JSON better than gzip -6 at a similar cost (bench/compression.mjs).
const BROTLI_QUALITY = 4
const GZIP_LEVEL = zlib.constants.Z_DEFAULT_COMPRESSION

/** Answers up to this announced length are gathered and compressed whole; longer or unannounced ones as they come. */
export const COMPRESS_MAX_BYTES = 8 * 1024 * 1024

/**
 * The encoding to answer with, by Accept-Encoding (RFC 9110 12.5.3): the highest q wins, Brotli
 * on a tie; `q=0` refuses; `*` covers encodings not named. Null: identity.
 */
export function chooseEncoding (accept: string | null): Encoding | null {
  if (accept === null || accept === '') return null
  let br = -1
  let gzip = -1
  let star = -1
  for (const part of accept.split(',')) {
    const semi = part.indexOf(';')
    const name = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase()
    let q = 1
    if (semi >= 0) {
      const m = /(?:^|;)\s*q\s*=\s*([0-9.]+)/i.exec(part.slice(semi))
      if (m !== null) q = Number(m[1])
      if (!Number.isFinite(q)) q = 0
    }
    if (name === 'br') br = q
    else if (name === 'gzip' || name === 'x-gzip') gzip = q
    else if (name === '*') star = q
  }
  if (br < 0) br = star
  if (gzip < 0) gzip = star
  if (br <= 0 && gzip <= 0) return null
  return br >= gzip ? 'br' : 'gzip'
}

const COMPRESSIBLE = /^(text\/(?!event-stream)|application\/(json|javascript|ecmascript|xml|x-ndjson|graphql-response\+json|x-www-form-urlencoded|wasm)|image\/svg\+xml|application\/[a-z0-9.+-]+\+(json|xml))/i

/** Whether an answer with these (lower-case) headers is worth compressing: a text-like type, not encoded yet. */
export function compressibleHead (headers: ReadonlyArray<[string, string]>): boolean {
  let typed = false
  for (let i = 0; i < headers.length; i++) {
    const [k, v] = headers[i]! // i < headers.length
    if (k === 'content-encoding' && v.trim().toLowerCase() !== 'identity') return false
    // A backend that forbids transformation keeps its bytes as sent.
    if (k === 'cache-control' && /no-transform/i.test(v)) return false
    if (k === 'content-type') { if (!COMPRESSIBLE.test(v)) return false; typed = true }
  }
  return typed
}

const brotliParams = (sizeHint: number): Record<number, number> => ({
  [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
  [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint
})

/** Compresses a whole body on the thread pool. */
export function compress (body: Buffer, enc: Encoding, cb: (err: Error | null, out: Buffer) => void): void {
  if (enc === 'gzip') zlib.gzip(body, { level: GZIP_LEVEL }, cb)
  else zlib.brotliCompress(body, { params: brotliParams(body.length) }, cb)
}

/** A compressing stream with the same settings (for answers compressed as they come). */
export function compressorOf (enc: Encoding): zlib.Gzip | zlib.BrotliCompress {
  return enc === 'gzip' ? zlib.createGzip({ level: GZIP_LEVEL }) : zlib.createBrotliCompress({ params: brotliParams(0) })
}

/** The head of an encoded answer: Content-Encoding added, a strong ETag made weak (the bytes differ). */
export function encodedHeaders (headers: ReadonlyArray<[string, string]>, enc: Encoding): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const [k, v] of headers) {
    if (k === 'content-encoding') continue
    out.push(k === 'etag' && !v.startsWith('W/') ? [k, `W/${v}`] : [k, v])
  }
  out.push(['content-encoding', enc])
  return out
}
