import { pino, destination, stdTimeFunctions, type Logger } from 'pino'
import { PinoPretty } from 'pino-pretty'
import type { Config } from './config/config.js'

export type { Logger }

/** `auto`: human-readable lines on a terminal, JSON (one object a line) everywhere else. */
export function prettyLogs (format: Config['LOG_FORMAT'], isTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTty)
}

/**
 * One pino logger. JSON lines are gathered per turn of the event loop (see
 * TurnBuffer), buffered (16 KiB) and written asynchronously so access logging
 * stays off the hot path; a timer flushes quiet periods.
 * Pretty lines are formatted in-process (no transport thread): they are for a
 * person at a terminal, not for throughput.
 */
export function createLogger (config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>, dest: number | string = 1): Logger {
  const pretty = prettyLogs(config.LOG_FORMAT)
  const stream = pretty
    ? PinoPretty({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true })
    : new TurnBuffer(destination({ dest, sync: false, minLength: 16384, maxWrite: 65536 }))
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'gatehouse' },
    timestamp: stdTimeFunctions.isoTime
  }, stream)
  if (!pretty) {
    setInterval(() => { logger.flush() }, 1000).unref()
    jsonStreams.set(logger, stream as { write: (line: string) => unknown })
  }
  return logger
}

type SonicBoom = ReturnType<typeof destination>

/**
 * Lines written in one turn of the event loop reach the destination as one string. sonic-boom
 * measures its last pending chunk (Buffer.byteLength over the whole chunk) on every write, so a
 * line cost it more the more lines were waiting: 3-4 µs a line at a gateway's pace, against a
 * fraction of a µs for one write per turn. Every line of the logger goes through here, so lines
 * keep their order; flush() and flushSync() hand over what is gathered first, and so does the
 * process's exit.
 */
class TurnBuffer {
  private pending = ''
  private scheduled = false

  constructor (readonly dest: SonicBoom) {
    for (const ref of liveBuffers) if (ref.deref() === undefined) liveBuffers.delete(ref)
    liveBuffers.add(new WeakRef(this))
  }

  write (line: string): boolean {
    this.pending += line
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.handOver)
    }
    return true
  }

  readonly handOver = (): void => {
    this.scheduled = false
    if (this.pending === '') return
    const text = this.pending
    this.pending = ''
    this.dest.write(text)
  }

  flush (cb?: (err?: Error) => void): void {
    this.handOver()
    this.dest.flush(cb)
  }

  flushSync (): void {
    this.handOver()
    this.dest.flushSync()
  }
}

const liveBuffers = new Set<WeakRef<TurnBuffer>>()
process.on('exit', () => {
  for (const ref of liveBuffers) {
    try { ref.deref()?.flushSync() } catch { /* the destination is closed or not open yet: nothing to add */ }
  }
})

// Loggers made by createLogger that write JSON lines, with their destination.
const jsonStreams = new WeakMap<Logger, { write: (line: string) => unknown }>()

export interface AccessFields {
  request_id: string
  method: string
  path: string
  route: string | null
  status: number
  upstream_ms: number | undefined
  ms: number
}

/**
 * The gateway's access line, one per request. On a JSON logger from createLogger it writes the
 * line pino's `logger.info(fields, 'access')` would write, built directly: pino's general path
 * costs about 6 µs a line, a sizeable share of a forwarded request. Anywhere else (pretty lines,
 * a logger given by the embedder) it is `logger.info`.
 */
export function accessLogger (logger: Logger): (f: AccessFields) => void {
  const stream = jsonStreams.get(logger)
  if (stream === undefined) return f => { logger.info(f, 'access') }
  const INFO = 30
  return f => {
    if (logger.levelVal > INFO) return
    stream.write(`{"level":30,"time":"${new Date().toISOString()}","service":"gatehouse","request_id":${JSON.stringify(f.request_id)},"method":${JSON.stringify(f.method)},` +
      `"path":${JSON.stringify(f.path)},"route":${f.route === null ? 'null' : JSON.stringify(f.route)},"status":${f.status},` +
      `${f.upstream_ms === undefined ? '' : `"upstream_ms":${f.upstream_ms},`}"ms":${f.ms},"msg":"access"}\n`)
  }
}
