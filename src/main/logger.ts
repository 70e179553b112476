import { pino, destination, stdSerializers, stdTimeFunctions, type Logger } from 'pino'
import { maskCredentials } from '../common/mask-credentials.js'
import { jsonString } from '../common/json-string.js'
import type { Config } from './config/config.js'
import { lazyRequire } from './lazy-require.js'

/** pino-pretty loads only for pretty logs (a terminal or LOG_FORMAT=pretty), not for JSON lines. */
const loadPinoPretty = lazyRequire<typeof import('pino-pretty')>('pino-pretty')

export type { Logger }

/** `auto`: human-readable lines on a terminal, JSON (one object a line) everywhere else. */
export function prettyLogs (format: Config['LOG_FORMAT'], isTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTty)
}

/**
 * One pino logger. JSON lines are gathered per turn of the event loop (see
 * TurnBuffer), buffered (16 KiB) and written asynchronously so access logging
 * stays off the hot path; a timer flushes quiet periods.
 * Pretty lines are formatted in-process (no transport thread), except the
 * access line: one line a request, built directly (see accessLogger) and
 * gathered per turn like the JSON lines. pino-pretty's own rendering of it
 * (eight lines, written synchronously) cost about 70 µs a request: a gateway
 * started in a terminal forwarded at less than half its pace.
 */
export function createLogger (config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>, to: number | string | LineSink = 1): Logger {
  const pretty = prettyLogs(config.LOG_FORMAT)
  // A gateway thread's JSON lines go to the main thread's logger (lineWriter), whole turns at a time.
  const sink = typeof to === 'object' && !pretty ? to : null
  const dest = typeof to === 'object' ? 1 : to
  const colorize = pretty && dest === 1 && process.stdout.isTTY === true
  const stream = pretty
    ? loadPinoPretty().PinoPretty({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true, destination: dest })
    : new TurnBuffer(sink ?? destination({ dest, sync: false, minLength: 16384, maxWrite: 65536 }))
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'gatehouse' },
    timestamp: stdTimeFunctions.isoTime,
    // No line shows a URL's password (a driver's error quoting DATABASE_URL, an OIDC or OTLP URL).
    hooks: { logMethod (args, method) { method.apply(this, maskedArgs(args) as Parameters<typeof method>) } },
    serializers: { err: maskedError }
  }, stream)
  if (!pretty) {
    setInterval(() => { logger.flush() }, 1000).unref()
    jsonStreams.set(logger, stream as { write: (line: string) => unknown })
  } else {
    // Written as soon as the turn ends (no minimum length: a person is reading).
    prettyAccess.set(logger, { buffer: new TurnBuffer(destination({ dest, sync: false, minLength: 0, maxWrite: 65536 })), colorize })
  }
  return logger
}

/** The message and the first-level text fields of a log call, with URL credentials masked. */
function maskedArgs (args: unknown[]): unknown[] {
  // logger.error(err): pino would take err.message, unmasked, as the line's message.
  if (args[0] instanceof Error) args = [{ err: args[0] }, ...(args.length > 1 ? args.slice(1) : [args[0].message])]
  return args.map(a => {
    if (typeof a === 'string') return maskCredentials(a)
    if (typeof a !== 'object' || a === null || a instanceof Error) return a
    let copy: Record<string, unknown> | null = null
    for (const [k, v] of Object.entries(a)) {
      if (typeof v !== 'string') continue
      const m = maskCredentials(v)
      if (m !== v) (copy ??= { ...a })[k] = m
    }
    return copy ?? a
  })
}

/** pino's error serializer, with URL credentials masked in the message and stack. */
function maskedError (err: unknown): unknown {
  if (typeof err === 'string') return maskCredentials(err)
  if (!(err instanceof Error)) return err
  const out = stdSerializers.err(err) as unknown as Record<string, unknown>
  for (const k of ['message', 'stack']) if (typeof out[k] === 'string') out[k] = maskCredentials(out[k] as string)
  return out
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

  constructor (readonly dest: LineSink) {
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

/** Where a logger's JSON text goes: sonic-boom, or a gateway thread's hand-over to the main thread. */
export interface LineSink {
  write (text: string): unknown
  flush (cb?: (err?: Error) => void): void
  flushSync (): void
}

/**
 * Writes text made of whole JSON lines (a gateway thread's) into this logger's stream, in turn
 * with its own lines: one writer per process, so lines of different threads never interleave.
 * Null for pretty output (threads then write their own lines).
 */
export function lineWriter (logger: Logger): ((text: string) => void) | null {
  const stream = jsonStreams.get(logger)
  return stream === undefined ? null : text => { stream.write(text) }
}

const liveBuffers = new Set<WeakRef<TurnBuffer>>()
process.on('exit', () => {
  for (const ref of liveBuffers) {
    try { ref.deref()?.flushSync() } catch { /* the destination is closed or not open yet: nothing to add */ }
  }
})

// Loggers made by createLogger that write JSON lines, with their destination.
const jsonStreams = new WeakMap<Logger, { write: (line: string) => unknown }>()
// Loggers made by createLogger that write pretty lines, with where their access lines go.
const prettyAccess = new WeakMap<Logger, { buffer: TurnBuffer, colorize: boolean }>()

export interface AccessFields {
  request_id: string
  /** Null when tracing is off (then not written). */
  trace_id?: string | null
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
 * costs about 6 µs a line, a sizeable share of a forwarded request. Its strings are quoted by
 * jsonString (JSON.stringify of the four was 30 % of a line's instructions, by callgrind).
 * Anywhere else (pretty lines, a logger given by the embedder) it is `logger.info`.
 */
export function accessLogger (logger: Logger): (f: AccessFields) => void {
  const INFO = 30
  const pretty = prettyAccess.get(logger)
  if (pretty !== undefined) {
    return f => {
      if (logger.levelVal > INFO) return
      pretty.buffer.write(prettyAccessLine(f, localTimeNow(), pretty.colorize))
    }
  }
  const stream = jsonStreams.get(logger)
  if (stream === undefined) return f => { logger.info(f.trace_id == null ? { ...f, trace_id: undefined } : f, 'access') }
  return f => {
    if (logger.levelVal > INFO) return
    stream.write(`{"level":30,"time":"${isoNow()}","service":"gatehouse","request_id":${jsonString(f.request_id)},${f.trace_id == null ? '' : `"trace_id":"${f.trace_id}",`}"method":${jsonString(f.method)},` +
      `"path":${jsonString(f.path)},"route":${f.route === null ? 'null' : jsonString(f.route)},"status":${f.status},` +
      `${f.upstream_ms === undefined ? '' : `"upstream_ms":${f.upstream_ms},`}"ms":${f.ms},"msg":"access"}\n`)
  }
}

// The time of an access line, made once a millisecond (a gateway writes many lines in one):
// formatting a Date cost about 0.5 µs a line.
function oncePerMs (format: (at: Date) => string): () => string {
  let made = -1
  let text = ''
  return () => {
    const now = Date.now()
    if (now !== made) { made = now; text = format(new Date(now)) }
    return text
  }
}
const isoNow = oncePerMs(at => at.toISOString())
const localTimeNow = oncePerMs(at => {
  const ms = at.getMilliseconds()
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`
})

// Printable ASCII but the space, the quote and the backslash: shown as it is; anything else
// (a control character could move a terminal's cursor) is shown quoted, as JSON spells it.
const PLAIN = /^[!#-[\]-~]*$/
const shown = (s: string): string => PLAIN.test(s) ? s : JSON.stringify(s)
const two = (n: number): string => n < 10 ? `0${n}` : `${n}`

/**
 * The access line in pretty form, one line a request, with pino-pretty's header (`time`: local
 * HH:MM:ss.mmm; level; message):
 *   [14:03:07.412] INFO: access GET /shop/items/7 200 2.13 ms (backend 1.9 ms) route "/shop /items/{id}" id 5b7c…
 */
export function prettyAccessLine (f: AccessFields, time: string, colorize: boolean): string {
  const level = colorize ? '\x1b[32mINFO\x1b[39m' : 'INFO'
  const msg = colorize ? '\x1b[36maccess\x1b[39m' : 'access'
  return `[${time}] ${level}: ${msg} ${shown(f.method)} ${shown(f.path)} ${f.status} ${f.ms} ms` +
    `${f.upstream_ms === undefined ? '' : ` (backend ${f.upstream_ms} ms)`}${f.route === null ? '' : ` route ${JSON.stringify(f.route)}`} id ${shown(f.request_id)}${f.trace_id == null ? '' : ` trace ${f.trace_id}`}\n`
}
