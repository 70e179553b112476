/**
 * A lean Redis connection for the one Redis call on the gateway's request path:
 * the rate-limit scripts of an authenticated request. Commands issued in one
 * turn of the event loop go out in one write and their answers are read in
 * order, with nothing else on the way.
 *
 *   evalsha ──▶ appended to this turn's text ──setImmediate──▶ one socket write
 *   socket data ──▶ RESP2 replies parsed in order ──▶ the oldest waiting command
 *
 * ioredis spent 8-12 µs of the gateway's CPU per script call (its command objects,
 * auto-pipelining and promise layers); this spends about 2-3 (bench/RESULTS.md).
 * Everything else keeps using ioredis.
 *
 * Failures never wait and never throw at the process: a command waits at most
 * `deadlineMs` for its answer; when the oldest answer is late every waiting
 * command fails and the connection is dropped (an answer arriving later cannot
 * be mistaken for another's). Without a connection a command fails at once; the
 * next command at least `retryMs` after the last attempt connects again (the
 * caller probes). Connecting, commands wait in the socket's buffer, within the
 * same deadline. The socket never keeps the process alive.
 */
import net from 'node:net'
import tls from 'node:tls'
import type { RedisScript } from './redis.js'

/** The connection settings ioredis parsed from REDIS_URL (its `options`). */
export interface PipeTarget {
  host?: string | null
  port?: number | null
  path?: string | null
  family?: number | null
  username?: string | null
  password?: string | null
  db?: number | null
  tls?: boolean | tls.ConnectionOptions | null
}

export interface RedisPipeOptions {
  /** A command without an answer after this long fails, and so does every command behind it. */
  deadlineMs: number
  /** Least time between two connection attempts. Default 1000. */
  retryMs?: number
}

/** An error answer from Redis (`-ERR …`), as opposed to a connection failure. */
export class RedisReplyError extends Error {}

interface Waiting {
  resolve: (value: unknown) => void
  reject: (err: Error) => void
  at: number
  /** The script to send with EVAL when the server answers NOSCRIPT. */
  script?: RedisScript
  keys?: string[]
  args?: Array<string | number>
}

const INCOMPLETE = Symbol('incomplete')
const CR = 13

export class RedisPipe {
  private socket: net.Socket | null = null
  private lastAttempt = 0
  /** Commands sent and not answered yet: waiting[head] is the oldest. */
  private readonly waiting: Waiting[] = []
  private head = 0
  /** Entries in the queue, answered ones not yet dropped included. */
  get queued (): number { return this.waiting.length }
  private text = ''
  private scheduled = false
  private input: Buffer | null = null
  private timer: NodeJS.Timeout | null = null
  private closed = false
  private readonly retryMs: number

  constructor (private readonly target: PipeTarget, private readonly opts: RedisPipeOptions) {
    this.retryMs = opts.retryMs ?? 1000
  }

  /** EVALSHA, sending the script with EVAL when the server does not have it. */
  evalsha (script: RedisScript, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.command(['EVALSHA', script.sha, keys.length, ...keys, ...args], { script, keys, args })
  }

  /** PING through this connection (connecting when it has none). */
  ping (): Promise<unknown> {
    return this.command(['PING'])
  }

  /** Fails what waits and closes the connection for good. */
  close (): void {
    this.closed = true
    this.drop(new Error('Redis connection closed'))
  }

  /** A command's answer; it fails at once when there is no connection and none may be tried yet. */
  private command (parts: Array<string | number>, noscript?: Pick<Waiting, 'script' | 'keys' | 'args'>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (!this.send(parts, { resolve, reject, at: 0, ...noscript })) reject(new Error('Redis is not connected'))
    })
  }

  private send (parts: Array<string | number>, w: Waiting): boolean {
    if (this.socket === null && !this.connect()) return false
    w.at = performance.now()
    this.waiting.push(w)
    this.text += encode(parts)
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.write)
    }
    if (this.timer === null) this.timer = setTimeout(this.checkDeadline, this.opts.deadlineMs).unref()
    return true
  }

  private readonly write = (): void => {
    this.scheduled = false
    const text = this.text
    this.text = ''
    if (text !== '' && this.socket !== null) this.socket.write(text)
  }

  private connect (): boolean {
    const now = performance.now()
    if (this.closed || (this.lastAttempt !== 0 && now - this.lastAttempt < this.retryMs)) return false
    this.lastAttempt = now
    const t = this.target
    const where: net.NetConnectOpts = typeof t.path === 'string' && t.path !== ''
      ? { path: t.path }
      : { host: t.host ?? '127.0.0.1', port: t.port ?? 6379, ...(typeof t.family === 'number' ? { family: t.family } : {}) }
    const socket = t.tls !== undefined && t.tls !== null && t.tls !== false
      ? tls.connect({ ...where, ...(typeof t.tls === 'object' ? t.tls : {}) } as tls.ConnectionOptions)
      : net.connect(where)
    socket.setNoDelay(true)
    socket.unref()
    socket.on('data', chunk => { if (this.socket === socket) this.read(chunk) })
    socket.on('error', err => { if (this.socket === socket) this.drop(err) })
    socket.on('close', () => { if (this.socket === socket) this.drop(new Error('Redis connection closed')) })
    this.socket = socket
    // Sent ahead of every command; their answers are checked like any other.
    const hello: Array<Array<string | number>> = []
    if (typeof t.password === 'string' && t.password !== '') hello.push(typeof t.username === 'string' && t.username !== '' ? ['AUTH', t.username, t.password] : ['AUTH', t.password])
    if (typeof t.db === 'number' && t.db !== 0) hello.push(['SELECT', t.db])
    for (const parts of hello) {
      this.send(parts, {
        resolve: () => {},
        reject: err => { if (this.socket === socket) this.drop(err) },
        at: 0
      })
    }
    return true
  }

  /** The oldest waiting command is late: every waiting command fails and the connection is dropped. */
  private readonly checkDeadline = (): void => {
    this.timer = null
    if (this.head >= this.waiting.length) return
    const late = performance.now() - this.waiting[this.head]!.at // head < length, checked above
    if (late >= this.opts.deadlineMs) {
      this.drop(new Error(`Redis did not answer within ${this.opts.deadlineMs} ms`))
      return
    }
    this.timer = setTimeout(this.checkDeadline, this.opts.deadlineMs - late).unref()
  }

  private drop (err: Error): void {
    const socket = this.socket
    this.socket = null
    this.input = null
    this.text = ''
    if (this.timer !== null) { clearTimeout(this.timer); this.timer = null }
    socket?.destroy()
    const failed = this.waiting.slice(this.head)
    this.waiting.length = 0
    this.head = 0
    for (const w of failed) w.reject(err)
  }

  private read (chunk: Buffer): void {
    let buf = this.input === null ? chunk : Buffer.concat([this.input, chunk])
    let pos = 0
    while (pos < buf.length) {
      let r: unknown
      try {
        r = parse(buf, pos)
      } catch (err) {
        this.drop(err as Error)
        return
      }
      if (r === INCOMPLETE) break
      pos = end
      if (this.head >= this.waiting.length) {
        this.drop(new Error('Redis sent an answer nothing asked for'))
        return
      }
      const w = this.waiting[this.head++]! // head < length, checked above
      if (this.head === this.waiting.length) { this.waiting.length = 0; this.head = 0 }
      if (r instanceof RedisReplyError && r.message.startsWith('NOSCRIPT') && w.script !== undefined) {
        // Loaded for next time by EVAL itself; this command's answer is EVAL's.
        this.send(['EVAL', w.script.source, w.keys!.length, ...w.keys!, ...w.args!], { resolve: w.resolve, reject: w.reject, at: 0 })
      } else if (r instanceof RedisReplyError) {
        w.reject(r)
      } else {
        w.resolve(r)
      }
      if (this.socket === null) return
    }
    buf = pos === buf.length ? EMPTY : buf.subarray(pos)
    this.input = buf.length === 0 ? null : buf
    // Under steady load the queue may never run empty: drop the answered entries now and then.
    if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting.splice(0, this.head)
      this.head = 0
    }
    if (this.head === 0 && this.waiting.length === 0 && this.timer !== null) { clearTimeout(this.timer); this.timer = null }
  }
}

const EMPTY = Buffer.alloc(0)

/** A command as a RESP array of bulk strings. */
function encode (parts: Array<string | number>): string {
  let out = `*${parts.length}\r\n`
  for (const p of parts) {
    const s = typeof p === 'number' ? String(p) : p
    out += `$${Buffer.byteLength(s)}\r\n${s}\r\n`
  }
  return out
}

// Where the last parsed reply ended (parse returns the value, the position stays here).
let end = 0

/** One RESP2 reply at `pos`, or INCOMPLETE when the buffer ends before it does. */
function parse (b: Buffer, pos: number): unknown {
  const nl = b.indexOf(CR, pos + 1)
  if (nl < 0 || nl + 1 >= b.length) return INCOMPLETE
  const type = b[pos]
  const line = b.toString('latin1', pos + 1, nl)
  const next = nl + 2
  switch (type) {
    case 58: /* : */ end = next; return Number(line)
    case 43: /* + */ end = next; return line
    case 45: /* - */ end = next; return new RedisReplyError(b.toString('utf8', pos + 1, nl))
    case 36: /* $ */ {
      const n = Number(line)
      if (n < 0) { end = next; return null }
      if (next + n + 2 > b.length) return INCOMPLETE
      end = next + n + 2
      return b.toString('utf8', next, next + n)
    }
    case 42: /* * */ {
      const n = Number(line)
      if (n < 0) { end = next; return null }
      const items: unknown[] = []
      let p = next
      for (let i = 0; i < n; i++) {
        const item = parse(b, p)
        if (item === INCOMPLETE) return INCOMPLETE
        items.push(item)
        p = end
      }
      end = p
      return items
    }
    default:
      throw new Error(`Redis sent an unknown reply type ${type}`)
  }
}
