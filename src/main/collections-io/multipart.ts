/**
 * A bounded multipart/form-data parser (RFC 7578) for uploads already held in memory:
 *
 *   preamble --B CRLF headers CRLF CRLF data CRLF --B CRLF headers … CRLF --B-- epilogue
 *
 * Parts are views into the body (no copies). Every malformed or oversized input answers a
 * 400/413/415 AppError with a sentence saying what is wrong.
 */
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../../common/errors.js'

export interface MultipartLimits {
  /** Most parts accepted (default 20). */
  maxParts?: number
  /** Largest part body in bytes (default 20 MiB). */
  maxPartBytes?: number
  /** Largest header block of one part in bytes (default 8 KiB). */
  maxHeaderBytes?: number
}

export interface MultipartPart {
  name: string
  filename?: string
  contentType?: string
  data: Buffer
}

const CRLF = Buffer.from('\r\n')
const HEADER_END = Buffer.from('\r\n\r\n')

/** The boundary of a `multipart/form-data` content type; throws 415/400 when absent or bad. */
export function multipartBoundary (contentType: string): string {
  const [type, ...params] = splitParams(contentType)
  if (type?.toLowerCase() !== 'multipart/form-data') {
    throw unsupportedMediaType('Send the file as multipart/form-data, in a part named "file".')
  }
  const boundary = params.find(p => p.key === 'boundary')?.value
  if (boundary === undefined || !/^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$/.test(boundary) || boundary.endsWith(' ')) {
    throw badRequest('The multipart/form-data content type has no valid boundary parameter.')
  }
  return boundary
}

/** Splits a multipart/form-data body into its parts. */
export function parseMultipart (body: Buffer, contentType: string, limits: MultipartLimits = {}): MultipartPart[] {
  const maxParts = limits.maxParts ?? 20
  const maxPartBytes = limits.maxPartBytes ?? 20 * 1024 * 1024
  const maxHeaderBytes = limits.maxHeaderBytes ?? 8 * 1024
  const delimiter = Buffer.from(`--${multipartBoundary(contentType)}`)
  const between = Buffer.concat([CRLF, delimiter])

  // the first delimiter opens the body or, after a preamble, starts a line
  let pos = body.subarray(0, delimiter.length).equals(delimiter) ? 0 : body.indexOf(between) + CRLF.length
  if (pos < CRLF.length && pos !== 0) throw malformed('it has no opening boundary')
  pos += delimiter.length
  const parts: MultipartPart[] = []
  // each turn consumes one part; the bound stops a body of endless tiny parts
  while (true) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) return parts // closing delimiter `--B--`
    pos = skipTransportPadding(body, pos)
    if (!body.subarray(pos, pos + 2).equals(CRLF)) throw malformed('a boundary line is not followed by a line break')
    if (parts.length === maxParts) throw payloadTooLarge(`The upload has more than ${maxParts} parts.`)
    const headerEnd = body.indexOf(HEADER_END, pos)
    if (headerEnd < 0) throw malformed('a part has no end of headers')
    if (headerEnd - pos > maxHeaderBytes) throw payloadTooLarge(`A part's headers are larger than ${maxHeaderBytes} bytes.`)
    const dataStart = headerEnd + HEADER_END.length
    const next = body.indexOf(between, dataStart)
    if (next < 0) throw malformed('it ends before the closing boundary')
    if (next - dataStart > maxPartBytes) throw payloadTooLarge(`A part is larger than ${maxPartBytes} bytes.`)
    parts.push({ ...partHeaders(body.subarray(pos + 2, headerEnd).toString('utf8'), parts.length), data: body.subarray(dataStart, next) })
    pos = next + between.length
  }
}

/** The first part with this name; throws 400 naming the missing part. */
export function requirePart (parts: MultipartPart[], name: string): MultipartPart {
  const part = parts.find(p => p.name === name)
  if (part === undefined) throw badRequest(`The upload has no part named "${name}".`, [{ field: name, message: 'is required' }])
  return part
}

function partHeaders (block: string, index: number): Omit<MultipartPart, 'data'> {
  let disposition: string | undefined
  let contentType: string | undefined
  for (const line of block === '' ? [] : block.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon <= 0) throw malformed(`part ${index + 1} has a header line without a name`)
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === 'content-disposition') disposition = value
    else if (name === 'content-type') contentType = value
  }
  const [type, ...params] = splitParams(disposition ?? '')
  if (type?.toLowerCase() !== 'form-data') throw malformed(`part ${index + 1} has no "Content-Disposition: form-data" header`)
  const name = params.find(p => p.key === 'name')?.value
  if (name === undefined || name === '') throw malformed(`part ${index + 1} has no name`)
  const extended = params.find(p => p.key === 'filename*')?.value
  const filename = (extended === undefined ? undefined : decodeExtended(extended)) ?? params.find(p => p.key === 'filename')?.value
  const out: Omit<MultipartPart, 'data'> = { name }
  if (filename !== undefined) out.filename = filename
  if (contentType !== undefined) out.contentType = contentType
  return out
}

/** `a; k="v"; k2=v2` → ['a', {key: 'k', value: 'v'}, …]; quoted values may hold `;` and `\"`. */
function splitParams (header: string): [string | undefined, ...Array<{ key: string, value: string }>] {
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  const semi = header.indexOf(';')
  const head = (semi < 0 ? header : header.slice(0, semi)).trim()
  const params: Array<{ key: string, value: string }> = []
  for (const m of header.slice(semi < 0 ? header.length : semi).matchAll(re)) {
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim()
    params.push({ key: (m[1] as string).toLowerCase(), value })
  }
  return [head === '' ? undefined : head, ...params]
}

/** RFC 5987 `UTF-8''na%C3%AFve.json`. */
function decodeExtended (value: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value)
  if (m === null || (m[1] as string).toLowerCase() !== 'utf-8') return undefined
  try { return decodeURIComponent(m[2] as string) } catch { return undefined }
}

/** Spaces and tabs may follow a boundary before its line break (RFC 2046). */
function skipTransportPadding (body: Buffer, pos: number): number {
  let p = pos
  while (p < body.length && (body[p] === 0x20 || body[p] === 0x09)) p++
  return p
}

const malformed = (why: string) => badRequest(`The multipart/form-data body is malformed: ${why}.`)
