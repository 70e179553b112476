/**
 * The span export queue: finished spans wait in one bounded array and leave in
 * batches, one OTLP/HTTP request at a time, on a timer (OTEL_BSP_SCHEDULE_DELAY)
 * or as soon as a batch is full. Nothing here runs inside a request: a request
 * only pushes to the array. A slow or down collector never stalls anything:
 * while one export is pending the queue fills, and spans past its bound are
 * dropped and counted; a failed export's spans are dropped and counted too.
 *
 *   end(span) ─push─> queue[≤ max] ──full?──> dropped{queue_full}++
 *                        │ timer / batch ready (one in flight)
 *                        ▼
 *                 encode ─> POST endpoint (timeout) ─ok─> exported += n
 *                                                    └fail─> dropped{export_failed} += n
 */
import http from 'node:http'
import https from 'node:https'
import type { ExportSpan } from './encode.js'

export interface ExporterOptions {
  url: string
  protocol: 'http/protobuf' | 'http/json'
  headers: Record<string, string>
  timeoutMs: number
  scheduleDelayMs: number
  maxQueue: number
  maxBatch: number
  encode: (spans: ExportSpan[]) => Uint8Array
  /** Told once per outage (the first failure after a success), with the reason. */
  onFailure: (message: string) => void
}

export interface SpanExporter {
  push (span: ExportSpan): void
  /** Sends what is queued (one batch after another) and stops the timer. */
  shutdown (): Promise<void>
  readonly stats: { exported: number, queueFull: number, exportFailed: number, queued: number }
}

export function createSpanExporter (o: ExporterOptions): SpanExporter {
  const url = new URL(o.url)
  const lib = url.protocol === 'https:' ? https : http
  // A fresh agent with keep-alive: one connection serves export after export.
  const agent = new lib.Agent({ keepAlive: true, maxSockets: 1 })
  const headers = { ...o.headers, 'content-type': o.protocol === 'http/json' ? 'application/json' : 'application/x-protobuf' }
  let queue: ExportSpan[] = []
  let sending: Promise<void> | null = null
  let soon = false
  let failing = false
  const stats = { exported: 0, queueFull: 0, exportFailed: 0, get queued () { return queue.length } }

  const post = (body: Uint8Array): Promise<void> => new Promise((resolve, reject) => {
    const req = lib.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) }, timeout: o.timeoutMs }, res => {
      res.resume()
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (status >= 200 && status < 300) resolve()
        else reject(new Error(`the collector answered ${status}`))
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer from the collector within ${o.timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })

  const sendBatch = async (): Promise<void> => {
    const batch = queue.length <= o.maxBatch ? queue : queue.slice(0, o.maxBatch)
    queue = batch === queue ? [] : queue.slice(o.maxBatch)
    try {
      await post(o.encode(batch))
      stats.exported += batch.length
      failing = false
    } catch (err) {
      stats.exportFailed += batch.length
      if (!failing) o.onFailure((err as Error).message)
      failing = true
    }
  }

  const flush = (): void => {
    soon = false
    if (sending !== null || queue.length === 0) return
    sending = sendBatch().finally(() => {
      sending = null
      if (queue.length >= o.maxBatch) flush()
    })
  }

  const timer = setInterval(flush, o.scheduleDelayMs)
  timer.unref()

  return {
    push (span) {
      if (queue.length >= o.maxQueue) { stats.queueFull++; return }
      queue.push(span)
      // A full batch leaves at once (after the current turn), not at the next tick of the timer.
      if (queue.length >= o.maxBatch && !soon && sending === null) { soon = true; setImmediate(flush) }
    },
    async shutdown () {
      clearInterval(timer)
      // Bounded: a slow or down collector delays a shutdown by 5 s at most (less with a shorter export timeout).
      const until = Date.now() + Math.min(o.timeoutMs, 5000)
      while ((sending !== null || queue.length > 0) && Date.now() < until) {
        if (sending === null) flush()
        let timer: NodeJS.Timeout | undefined
        await Promise.race([sending, new Promise(resolve => { timer = setTimeout(resolve, Math.max(0, until - Date.now())) })])
        clearTimeout(timer)
      }
      // Whatever is still in flight is abandoned with its connection.
      agent.destroy()
    },
    stats
  }
}
