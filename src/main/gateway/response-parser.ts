/**
 * Incremental HTTP/1.1 response parser for the upstream client: head, then a
 * body framed by Content-Length, chunked encoding, or the connection's close.
 * Chunks are handed on as they arrive (no buffering of bodies); they are views of
 * the pushed bytes, valid only until push returns.
 */

export interface ResponseHead { status: number, statusText: string, headers: Array<[string, string]>, keepAlive: boolean }

export interface ParserEvents {
  onHead (head: ResponseHead, bodyFraming: 'none' | 'length' | 'chunked' | 'close', length: number): void
  onBody (chunk: Buffer): void
  onEnd (reusable: boolean): void
}

const MAX_HEAD = 64 * 1024
const enum S { Head, Length, ChunkSize, ChunkData, ChunkDataEnd, Trailers, Close, Done }

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/
// In the header block (lines joined by CRLF): a NUL, a CR not followed by LF, or an LF not after a CR.
const BAD_HEADER_BLOCK = /\0|\r(?!\n)|(?<!\r)\n/

export class ResponseParser {
  private state = S.Head
  private head: Buffer | null = null
  private remaining = 0
  private keepAlive = true
  private line = ''

  constructor (private readonly ev: ParserEvents, private readonly noBody: boolean) {}

  get done (): boolean { return this.state === S.Done }
  get closeDelimited (): boolean { return this.state === S.Close }

  /** Feeds bytes; throws on a malformed answer. */
  push (data: Buffer): void {
    let buf = data
    while (buf.length > 0) {
      switch (this.state) {
        case S.Head: {
          const joined = this.head === null ? buf : Buffer.concat([this.head, buf])
          const end = joined.indexOf('\r\n\r\n')
          if (end === -1) {
            if (joined.length > MAX_HEAD) throw new Error('upstream response head too large')
            // Kept past this call: a copy (the caller's buffer is reused for the next read).
            this.head = joined === buf ? Buffer.from(buf) : joined
            return
          }
          this.head = null
          this.parseHead(joined.subarray(0, end).toString('latin1'))
          buf = joined.subarray(end + 4)
          continue
        }
        case S.Length: {
          const n = Math.min(this.remaining, buf.length)
          this.ev.onBody(buf.subarray(0, n))
          this.remaining -= n
          buf = buf.subarray(n)
          if (this.remaining === 0) this.finish()
          continue
        }
        case S.ChunkSize:
        case S.ChunkDataEnd:
        case S.Trailers: {
          const nl = buf.indexOf(10)
          if (nl === -1) { this.line += buf.toString('latin1'); if (this.line.length > 4096) throw new Error('bad chunked encoding'); return }
          const line = (this.line + buf.subarray(0, nl).toString('latin1')).replace(/\r$/, '')
          this.line = ''
          buf = buf.subarray(nl + 1)
          if (this.state === S.ChunkSize) {
            const size = parseInt(line.split(';')[0]!.trim(), 16) // split gives at least one element
            if (!Number.isFinite(size) || size < 0 || !/^[0-9a-fA-F]+/.test(line)) throw new Error('bad chunk size')
            if (size === 0) this.state = S.Trailers
            else { this.remaining = size; this.state = S.ChunkData }
          } else if (this.state === S.ChunkDataEnd) {
            if (line !== '') throw new Error('bad chunk terminator')
            this.state = S.ChunkSize
          } else if (line === '') this.finish()
          continue
        }
        case S.ChunkData: {
          const n = Math.min(this.remaining, buf.length)
          this.ev.onBody(buf.subarray(0, n))
          this.remaining -= n
          buf = buf.subarray(n)
          if (this.remaining === 0) this.state = S.ChunkDataEnd
          continue
        }
        case S.Close:
          this.ev.onBody(buf)
          return
        case S.Done:
          // Bytes after a complete answer: the connection is not safe to reuse.
          this.keepAlive = false
          return
      }
    }
  }

  /** The upstream closed: ends a close-delimited body, otherwise reports truncation. */
  eof (): void {
    if (this.state === S.Close) { this.keepAlive = false; this.finish(); return }
    if (this.state !== S.Done) throw new Error('upstream closed the connection mid-response')
  }

  private parseHead (text: string): void {
    // Lines are taken in place (no split into an array), and the header block is checked for a
    // stray CR, LF or NUL in one test rather than one per line.
    const firstEnd = text.indexOf('\r\n')
    const m = STATUS_LINE.exec(firstEnd === -1 ? text : text.slice(0, firstEnd))
    if (m === null) throw new Error('malformed upstream status line')
    // A bare CR or LF (or NUL) inside a header would be relayed as a header break to the client: response splitting.
    if (firstEnd !== -1 && BAD_HEADER_BLOCK.test(text.slice(firstEnd + 2))) throw new Error('malformed upstream header')
    const status = Number(m[2])
    const headers: Array<[string, string]> = []
    let length = -1
    let chunked = false
    let conn = ''
    for (let start = firstEnd === -1 ? text.length + 2 : firstEnd + 2; start <= text.length; ) {
      let end = text.indexOf('\r\n', start)
      if (end === -1) end = text.length
      const l = text.slice(start, end)
      start = end + 2
      const c = l.indexOf(':')
      if (c <= 0) throw new Error('malformed upstream header')
      const name = l.slice(0, c).trim().toLowerCase()
      const value = l.slice(c + 1).trim()
      if (name === 'content-length') {
        const n = Number(value)
        if (!/^\d+$/.test(value) || (length !== -1 && length !== n)) throw new Error('invalid upstream content-length')
        length = n
      } else if (name === 'transfer-encoding') chunked = value.toLowerCase().split(',').map(s => s.trim()).includes('chunked')
      else if (name === 'connection') conn = value.toLowerCase()
      headers.push([name, value])
    }
    if (status >= 100 && status < 200) return // interim answer (100 Continue): wait for the real head
    this.keepAlive = m[1] === '1' ? !conn.includes('close') : conn.includes('keep-alive')
    const head = { status, statusText: m[3] ?? '', headers, keepAlive: this.keepAlive }
    if (this.noBody || status === 204 || status === 304) {
      this.ev.onHead(head, 'none', 0)
      this.finish()
    } else if (chunked) {
      this.ev.onHead(head, 'chunked', -1)
      this.state = S.ChunkSize
    } else if (length >= 0) {
      this.ev.onHead(head, 'length', length)
      this.remaining = length
      if (length === 0) this.finish()
      else this.state = S.Length
    } else {
      this.keepAlive = false
      this.ev.onHead(head, 'close', -1)
      this.state = S.Close
    }
  }

  private finish (): void {
    this.state = S.Done
    this.ev.onEnd(this.keepAlive)
  }
}
