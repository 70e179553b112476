/**
 * Request log writer: the gateway appends a record per request (O(1), no I/O on
 * the hot path); a timer writes them in batches through `sink` (one COPY per
 * batch on PostgreSQL, one append to the embedded store's files): once a
 * second, or sooner once `eagerRecords` wait (checked every `checkIntervalMs`).
 * Under load records are written within about 100 ms: a record held for a
 * second is still alive at the young generation's collections meanwhile,
 * which copy it and then move it to the old generation; written sooner, most
 * die young (p99 at equal load 0.3-1.8 ms lower, bench/RESULTS.md). The buffer is
 * bounded: past `maxBuffer` (overload, or while the sink fails) the oldest
 * records are dropped and counted (`gatehouse_request_log_dropped_total` at
 * /metrics), with one warning per outage. close() writes everything left.
 *
 *   append ─> [ queue: head … tail ] ─ timer ─> batch ─> sink (COPY / append)
 *                 └─ full: drop oldest, dropped++
 */
import type { Logger } from '../logger.js'
import type { RequestRecord } from '../store/request-record.js'

export interface RequestLogOptions {
  sink: (records: RequestRecord[]) => Promise<void>
  logger: Logger
  /** The longest a record waits (default 1000 ms); the only pace while the sink fails. */
  flushIntervalMs?: number
  /** How often the buffer is looked at (default 100 ms). */
  checkIntervalMs?: number
  /** Records that, waiting, make a write due before flushIntervalMs (default 256). */
  eagerRecords?: number
  batchSize?: number
  maxBuffer?: number
}

export class RequestLogWriter {
  // A queue over one array: `head` is the sequence number of the oldest waiting record, `base` that
  // of queue[0]; head only moves forward (dropping the oldest is O(1), unlike Array.shift on 50,000
  // records) and the array is cut down now and then.
  private queue: RequestRecord[] = []
  private head = 0
  private base = 0
  private flushing: Promise<void> | null = null
  private failing = false
  private readonly timer: NodeJS.Timeout
  private readonly max: number
  private readonly interval: number
  private readonly eager: number
  private lastFlush = Date.now()
  dropped = 0
  written = 0

  constructor (private readonly o: RequestLogOptions) {
    this.max = o.maxBuffer ?? 50_000
    this.interval = o.flushIntervalMs ?? 1000
    this.eager = o.eagerRecords ?? 256
    this.timer = setInterval(this.tick, Math.min(this.interval, o.checkIntervalMs ?? 100))
    this.timer.unref()
  }

  // A store that is down is tried once an interval, not at every look.
  private readonly tick = (): void => {
    if (Date.now() - this.lastFlush >= this.interval || (!this.failing && this.buffered >= this.eager)) this.flush().catch(() => {})
  }

  /** Records waiting to be written. */
  get buffered (): number { return this.base + this.queue.length - this.head }

  append (r: RequestRecord): void {
    if (this.buffered >= this.max) {
      this.head++
      this.dropped++
      if (this.head - this.base >= this.max) this.compact()
    }
    this.queue.push(r)
  }

  async flush (): Promise<void> {
    if (this.flushing !== null) return await this.flushing
    this.lastFlush = Date.now()
    this.flushing = (async () => {
      const size = this.o.batchSize ?? 1000
      // What waits now, not what arrives meanwhile: under load, chasing the records that come in
      // during each write ended every flush with a tail of appends of a few records each.
      const end = this.base + this.queue.length
      while (this.head < end) {
        const start = this.head
        const batch = this.queue.slice(start - this.base, Math.min(end, start + size) - this.base)
        try {
          await this.o.sink(batch)
          // Records dropped while the batch was being written moved head past some of it already.
          this.head = Math.max(this.head, start + batch.length)
          this.written += batch.length
          if (this.buffered === 0 || this.head - this.base > 4096) this.compact()
          if (this.failing) { this.failing = false; this.o.logger.info('request log writes resumed') }
        } catch (err) {
          if (!this.failing) this.o.logger.warn({ err: (err as Error).message }, 'request log writes failing; records are kept in a bounded buffer')
          this.failing = true
          return
        }
      }
    })().finally(() => { this.flushing = null })
    return await this.flushing
  }

  /** Prometheus text lines for /metrics. */
  prometheus (): string[] {
    return [
      '# HELP gatehouse_request_log_dropped_total Request log records dropped because the buffer was full (overload or store outage).',
      '# TYPE gatehouse_request_log_dropped_total counter',
      `gatehouse_request_log_dropped_total ${this.dropped}`,
      '# HELP gatehouse_request_log_buffered Request log records waiting to be written.',
      '# TYPE gatehouse_request_log_buffered gauge',
      `gatehouse_request_log_buffered ${this.buffered}`,
      '# HELP gatehouse_request_log_written_total Request log records written to the store.',
      '# TYPE gatehouse_request_log_written_total counter',
      `gatehouse_request_log_written_total ${this.written}`
    ]
  }

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.flush()
    // Records appended while that flush ran, unless the store is failing.
    while (this.buffered > 0 && !this.failing) await this.flush()
  }

  private compact (): void {
    const done = this.head - this.base
    if (done === 0) return
    this.queue = done === this.queue.length ? [] : this.queue.slice(done)
    this.base = this.head
  }
}
