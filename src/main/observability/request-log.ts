/**
 * Request log writer: the gateway appends a record per request (O(1), no I/O on
 * the hot path); records are written in batches by a timer through `sink`.
 * The buffer is bounded: while the sink fails, the oldest records are dropped
 * and counted, with one warning per outage.
 */
import type { Logger } from '../logger.js'
import type { RequestRecord } from './types.js'

export interface RequestLogOptions {
  sink: (records: RequestRecord[]) => Promise<void>
  logger: Logger
  flushIntervalMs?: number
  batchSize?: number
  maxBuffer?: number
}

export class RequestLogWriter {
  private buffer: RequestRecord[] = []
  private flushing: Promise<void> | null = null
  private failing = false
  private readonly timer: NodeJS.Timeout
  dropped = 0

  constructor (private readonly o: RequestLogOptions) {
    this.timer = setInterval(() => { this.flush().catch(() => {}) }, o.flushIntervalMs ?? 1000)
    this.timer.unref()
  }

  append (r: RequestRecord): void {
    if (this.buffer.length >= (this.o.maxBuffer ?? 50_000)) { this.buffer.shift(); this.dropped++ }
    this.buffer.push(r)
  }

  async flush (): Promise<void> {
    if (this.flushing !== null) return await this.flushing
    this.flushing = (async () => {
      const size = this.o.batchSize ?? 500
      while (this.buffer.length > 0) {
        const batch = this.buffer.slice(0, size)
        try {
          await this.o.sink(batch)
          this.buffer.splice(0, batch.length)
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

  async close (): Promise<void> {
    clearInterval(this.timer)
    await this.flush()
  }
}
