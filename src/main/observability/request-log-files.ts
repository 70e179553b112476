/**
 * The embedded store's request log: one line of JSON per request in segment files under
 * DATA_DIR/request-log, the way nginx keeps an access log, rather than rows in the embedded
 * PostgreSQL. A row there cost the store's thread 13-17 µs of CPU (WebAssembly PostgreSQL,
 * COPY, two indexes), a sizeable share of a forwarded request on the cores the gateway shares;
 * a line here costs its JSON and a share of one append a second.
 *
 *   DATA_DIR/request-log/
 *     0000000000000001-1795657710553.ndjson   the first line's seq - when the segment was opened (epoch ms)
 *     0000000000184211-1795658610590.ndjson   a new segment every 15 minutes, at 64 MiB, and at each start
 *
 * Each line is `{"seq":N, ...the record}`; seq grows by one per record and is the cursor, as
 * the table's seq column is on PostgreSQL. Lines are written whole in one append per batch; a
 * line cut short by a crash (no newline at its end) is not read. Listing walks the segments
 * newest first (or oldest first) and stops at a page: a segment is skipped when the cursor or
 * `since` rules out every line in it (a line is written after its request started, so a
 * segment closed before `since` holds only earlier requests); filters on ids, method and
 * status are matched on the line's text before it is parsed. Retention removes whole segments
 * whose every line is older than the period, so records are kept up to 15 minutes longer
 * than REQUEST_LOG_RETENTION_HOURS.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Page } from '../../common/types.js'
import { decodeCursor, encodeCursor, type PageQuery } from '../store/rows.js'
import { listRequestLogs, type RequestLogFilter, type RequestLogItem, type RequestLogStore } from '../store/request-logs.js'
import type { Queryable } from '../store/types.js'
import { loggedPath, type RequestRecord } from '../store/request-record.js'
import { jsonString } from '../../common/json-string.js'

const NAME = /^(\d{16})-(\d{13})\.ndjson$/
const CHUNK = 256 * 1024
const NL = 0x0a

interface Segment { name: string, first: number, opened: number }

export interface RequestLogFilesOptions {
  /** A new segment after this long (default 15 minutes). */
  segmentMs?: number
  /** A new segment past this size (default 64 MiB). */
  segmentBytes?: number
  now?: () => number
}

export class RequestLogFiles implements RequestLogStore {
  private segments: Segment[] = [] // oldest first
  private handle: fs.FileHandle | null = null
  private size = 0
  private seq = 0
  /** Where a batch's lines are encoded; null while an append uses it. */
  private out: Buffer | null = Buffer.allocUnsafe(OUT_KEEP)
  private readonly segmentMs: number
  private readonly segmentBytes: number
  private readonly now: () => number

  private constructor (readonly dir: string, o: RequestLogFilesOptions) {
    this.segmentMs = o.segmentMs ?? 15 * 60_000
    this.segmentBytes = o.segmentBytes ?? 64 * 1024 * 1024
    this.now = o.now ?? Date.now
  }

  static async open (dir: string, o: RequestLogFilesOptions = {}): Promise<RequestLogFiles> {
    const log = new RequestLogFiles(dir, o)
    await fs.mkdir(dir, { recursive: true })
    for (const name of await fs.readdir(dir)) {
      const m = NAME.exec(name)
      if (m !== null) log.segments.push({ name, first: Number(m[1]), opened: Number(m[2]) })
    }
    log.segments.sort((a, b) => a.first - b.first)
    // The newest segment's name says its first seq; its last whole line, if any, the last one used.
    const last = log.segments[log.segments.length - 1]
    if (last !== undefined) {
      log.seq = last.first - 1
      for await (const line of linesBackward(path.join(dir, last.name))) {
        const seq = seqOf(line)
        if (seq > 0) { log.seq = seq; break }
      }
    }
    return log
  }

  /**
   * Moves request-log rows an earlier version kept in the embedded store's table into the files,
   * oldest first, a page at a time as the table's own listing reads them (a page is deleted once
   * written: a crash between the two repeats at most one page; nothing else writes the table
   * then, so the first rows by seq are the page). Returns the rows moved.
   */
  async takeOver (store: Queryable): Promise<number> {
    let moved = 0
    for (;;) {
      const { items } = await listRequestLogs(store, { limit: 5000, order: 'asc' }, {})
      if (items.length === 0) return moved
      await this.insert(items.map(({ time, ...rest }) => ({ time: Date.parse(time), ...rest })))
      await store.query('DELETE FROM request_logs WHERE seq IN (SELECT seq FROM request_logs ORDER BY seq LIMIT $1)', [items.length])
      moved += items.length
    }
  }

  /** Appends a batch (the writer's sink). A failed append leaves no partial line behind. */
  async insert (records: RequestRecord[]): Promise<void> {
    if (records.length === 0) return
    const now = this.now()
    const current = this.segments[this.segments.length - 1]
    if (this.handle === null || current === undefined || this.size >= this.segmentBytes || now - current.opened >= this.segmentMs) await this.rotate(now)
    const handle = this.handle as fs.FileHandle
    // Each line goes straight into one reused buffer: concatenating the batch into a string first
    // cost a flattening and a second pass to encode it (about half of a line's cost).
    // Taken while this append uses it: an overlapping append gets a buffer of its own.
    let out = this.out ?? Buffer.allocUnsafe(OUT_KEEP)
    this.out = null
    let n = 0
    let seq = this.seq
    for (const r of records) {
      const line = requestLogLine(r, ++seq)
      // A UTF-8 line is at most 3 bytes per UTF-16 unit.
      if (n + line.length * 3 > out.length) {
        const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, n + line.length * 3))
        out.copy(bigger, 0, 0, n)
        out = bigger
      }
      n += out.write(line, n)
    }
    const bytes = out.subarray(0, n)
    try {
      await handle.write(bytes, 0, bytes.length)
    } catch (err) {
      await handle.truncate(this.size).catch(() => {})
      throw err
    } finally {
      // Given back once written (a larger one, made for a big batch, is let go).
      if (out.length <= OUT_KEEP) this.out = out
    }
    this.seq = seq
    this.size += bytes.length
  }

  async list (pq: PageQuery & { order?: 'asc' | 'desc' }, f: RequestLogFilter): Promise<Page<RequestLogItem>> {
    const after = decodeCursor(pq.cursor)
    const desc = (pq.order ?? 'desc') === 'desc'
    const since = f.since === undefined ? undefined : Date.parse(f.since)
    const until = f.until === undefined ? undefined : Date.parse(f.until)
    // Each filter on a text or status field, as the line spells it: JSON.stringify writes a
    // value one way, and a quote inside another value is escaped, so a match is exact.
    const needles: string[] = []
    for (const k of ['collection_id', 'proxy_id', 'client_id', 'profile_id', 'method', 'trace_id'] as const) {
      if (f[k] !== undefined) needles.push(`"${k}":${JSON.stringify(f[k])}`)
    }
    if (f.status !== undefined) needles.push(`"status":${f.status},`)
    const found: Array<{ seq: number, r: RequestRecord & { seq?: number } }> = []
    const all = [...this.segments] // as they are now: a rotation or pruning meanwhile changes the list
    for (let k = 0; k < all.length; k++) {
      const i = desc ? all.length - 1 - k : k
      const seg = all[i]! // 0 <= i < all.length
      const next = all[i + 1]
      if (after > 0 && (desc ? seg.first >= after : next !== undefined && next.first - 1 <= after)) continue
      if (since !== undefined && next !== undefined && next.opened < since) continue
      const lines = desc ? linesBackward(path.join(this.dir, seg.name)) : linesForward(path.join(this.dir, seg.name))
      for await (const line of lines) {
        const seq = seqOf(line)
        if (seq === 0 || (after > 0 && (desc ? seq >= after : seq <= after))) continue
        if (!needles.every(n => line.includes(n))) continue
        let r: RequestRecord & { seq?: number }
        try { r = JSON.parse(line) } catch { continue }
        if ((since !== undefined && r.time < since) || (until !== undefined && r.time >= until)) continue
        found.push({ seq, r })
        if (found.length > pq.limit) break
      }
      if (found.length > pq.limit) break
    }
    const items = found.slice(0, pq.limit)
    return {
      items: items.map(({ r: { seq: _seq, time, refused: _refused, ...rest } }) => ({ time: new Date(time).toISOString(), ...rest, upstream_ms: rest.upstream_ms ?? null, trace_id: rest.trace_id ?? null })),
      next_cursor: found.length > pq.limit ? encodeCursor(items[items.length - 1]!.seq) : null // more found than the limit: items is full
    }
  }

  /** Removes the segments whose every line is older than `olderThan`; returns the lines removed. */
  async prune (olderThan: Date): Promise<number> {
    let removed = 0
    for (;;) {
      const [seg, next] = this.segments
      // The newest segment stays, however old.
      if (seg === undefined || next === undefined || next.opened >= olderThan.getTime()) break
      await fs.rm(path.join(this.dir, seg.name), { force: true })
      this.segments.shift()
      removed += next.first - seg.first
    }
    return removed
  }

  async close (): Promise<void> {
    const handle = this.handle
    this.handle = null
    await handle?.close()
  }

  private async rotate (now: number): Promise<void> {
    const name = `${String(this.seq + 1).padStart(16, '0')}-${String(now).padStart(13, '0')}.ndjson`
    const previous = this.handle
    this.handle = null
    await previous?.close().catch(() => {})
    // A segment that got no line (a failed first append, or none since a restart) gives its place to this one.
    const last = this.segments[this.segments.length - 1]
    if (last !== undefined && last.first === this.seq + 1) {
      this.segments.pop()
      if (last.name !== name) await fs.rm(path.join(this.dir, last.name), { force: true })
    }
    this.handle = await fs.open(path.join(this.dir, name), 'a')
    this.size = (await this.handle.stat()).size
    this.segments.push({ name, first: this.seq + 1, opened: now })
  }
}

/** The batch buffer kept between appends (a larger one made for a big batch is let go). */
const OUT_KEEP = 256 * 1024

const jsonStringOrNull = (s: string | null | undefined): string => s == null ? 'null' : jsonString(s)
const jsonNumber = (n: number): string => Number.isFinite(n) ? `${n}` : 'null'

/**
 * A record's line, as `{"seq":N,` + JSON.stringify(record) would spell it (fields in the order the
 * gateway makes them; absent optional fields left out), built field by field: the generic
 * serializer walked the object's shape for every record. The path is cut as loggedPath() says.
 */
export function requestLogLine (r: RequestRecord, seq: number): string {
  return `{"seq":${seq},"time":${jsonNumber(r.time)},"request_id":${jsonString(r.request_id)},"collection_id":${jsonStringOrNull(r.collection_id)},` +
    `"proxy_id":${jsonStringOrNull(r.proxy_id)},"client_id":${jsonStringOrNull(r.client_id)},"profile_id":${jsonStringOrNull(r.profile_id)},` +
    `"method":${jsonString(r.method)},"path":${jsonString(loggedPath(r.path))},"status":${jsonNumber(r.status)},"duration_ms":${jsonNumber(r.duration_ms)},` +
    `"upstream_ms":${r.upstream_ms == null ? 'null' : jsonNumber(r.upstream_ms)},"bytes_in":${jsonNumber(r.bytes_in)},"bytes_out":${jsonNumber(r.bytes_out)}` +
    `${r.refused === undefined ? '' : `,"refused":${r.refused}`}${r.trace_id === undefined ? '' : `,"trace_id":${jsonStringOrNull(r.trace_id)}`}}\n`
}

/** The seq at the start of a line, or 0 when the line is not one of ours. */
function seqOf (line: string): number {
  if (!line.startsWith('{"seq":')) return 0
  const end = line.indexOf(',', 7)
  const n = Number(line.slice(7, end))
  return Number.isSafeInteger(n) && n > 0 ? n : 0
}

async function openForRead (file: string): Promise<fs.FileHandle | null> {
  try {
    return await fs.open(file, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null // pruned meanwhile
    throw err
  }
}

/** Whole lines from the end of the file back to its start; bytes after the last newline are not a line yet. */
async function * linesBackward (file: string): AsyncGenerator<string> {
  const fh = await openForRead(file)
  if (fh === null) return
  try {
    let pos = (await fh.stat()).size
    let carry: Buffer | null = null // the start of the file's data after the chunk being read
    let first = true
    while (pos > 0) {
      const start = Math.max(0, pos - CHUNK)
      const chunk = Buffer.allocUnsafe(pos - start)
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, start)
      const data: Buffer = carry === null ? chunk.subarray(0, bytesRead) : Buffer.concat([chunk.subarray(0, bytesRead), carry])
      pos = start
      let end = data.length
      if (first) {
        end = data.lastIndexOf(NL) + 1 // drop an unfinished last line
        if (end === 0) { carry = null; continue } // all of it unfinished: look further back
        first = false
      }
      // Lines in data[0, end): each ends with a newline; the first may have begun in an earlier chunk.
      let lineEnd = end - 1
      while (lineEnd >= 0) {
        const nl = lineEnd === 0 ? -1 : data.lastIndexOf(NL, lineEnd - 1)
        if (nl < 0 && pos > 0) break
        if (lineEnd > nl + 1) yield data.toString('utf8', nl + 1, lineEnd)
        lineEnd = nl
      }
      carry = lineEnd >= 0 ? Buffer.from(data.subarray(0, lineEnd + 1)) : null
    }
  } finally {
    await fh.close()
  }
}

/** Whole lines from the start of the file; bytes after the last newline are not a line yet. */
async function * linesForward (file: string): AsyncGenerator<string> {
  const fh = await openForRead(file)
  if (fh === null) return
  try {
    const size = (await fh.stat()).size
    let pos = 0
    let carry: Buffer | null = null
    while (pos < size) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, size - pos))
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos)
      if (bytesRead === 0) break
      pos += bytesRead
      const data: Buffer = carry === null ? chunk.subarray(0, bytesRead) : Buffer.concat([carry, chunk.subarray(0, bytesRead)])
      let lineStart = 0
      for (let nl = data.indexOf(NL); nl >= 0; nl = data.indexOf(NL, lineStart)) {
        if (nl > lineStart) yield data.toString('utf8', lineStart, nl)
        lineStart = nl + 1
      }
      carry = lineStart < data.length ? Buffer.from(data.subarray(lineStart)) : null
    }
  } finally {
    await fh.close()
  }
}
