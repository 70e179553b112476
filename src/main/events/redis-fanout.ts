/**
 * Cross-instance transport of the event hub.
 *
 *   publish ─EVAL─▶ XADD <prefix>events MAXLEN ~ N  (the stream id is the SSE id)
 *                   PUBLISH <prefix>events "<id> <nonce> <json>"   (same script: same order)
 *   every instance ◀─ subscriber connection (a duplicate; it can run nothing else)
 *   replay(after)  ─EVAL─▶ is `after` still in the stream? then XRANGE (after +
 *
 * A Redis stream rather than INCR + a capped list: one key, ids made by Redis
 * (no clock or counter to agree on between instances), an exclusive XRANGE
 * for replay and trimming built in. Pub/sub messages sent while a subscriber
 * is disconnected are lost: after resubscribing the hub reads the stream from
 * the last id it saw.
 */
import type { Redis } from 'ioredis'
import type { Logger } from '../logger.js'
import { createOutageLog, defineScript, runScript } from '../cache/redis.js'

const PUBLISH = defineScript(`
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'n', ARGV[2], 'e', ARGV[3])
redis.call('PUBLISH', ARGV[4], id .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
return id`)

// Covered: ARGV[1] is still an entry (trimming removes the oldest first, so
// everything after it is there too), or it is 0-0 and nothing was ever trimmed.
const REPLAY = defineScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {ARGV[1] == '0-0' and 1 or 0, '0-0', {}}
end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local f = {}
for i = 1, #info, 2 do f[info[i]] = info[i + 1] end
local covered
if ARGV[1] == '0-0' then covered = f['entries-added'] == f['length']
else covered = #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 1 end
if not covered then return {0, f['last-generated-id'], {}} end
return {1, f['last-generated-id'], redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')}`)

export interface StreamEntry { id: string, nonce: string, data: string }
export interface ReplayResult { covered: boolean, tail: string, entries: StreamEntry[] }

export interface FanoutHandlers {
  event (entry: StreamEntry): void
  broadcast (channel: string, message: unknown, source: string): void
  /** The subscriber connection is subscribed; `afterLoss` when it had been lost. */
  subscribed (afterLoss: boolean): void
}

export class RedisFanout {
  readonly #redis: Redis
  readonly #sub: Redis
  readonly #stream: string
  readonly #eventsChannel: string
  readonly #broadcastChannel: string
  readonly #maxLen: number
  #subscribed = false
  #lost = false
  #closed = false
  #retry: NodeJS.Timeout | undefined

  constructor (redis: Redis, logger: Logger, opts: { keyPrefix: string, maxLen: number }, handlers: FanoutHandlers) {
    this.#redis = redis
    this.#stream = `${opts.keyPrefix}events`
    this.#eventsChannel = `${opts.keyPrefix}events`
    this.#broadcastChannel = `${opts.keyPrefix}broadcast`
    this.#maxLen = opts.maxLen
    // Resubscribing is ours to do on every `ready`, so a subscribe that failed is retried too.
    this.#sub = redis.duplicate({ autoResubscribe: false, enableOfflineQueue: false, enableAutoPipelining: false })
    const outage = createOutageLog(logger, 'event-fanout')
    this.#sub.on('error', err => outage.fail(err, 'Event fan-out lost its Redis subscription; retrying'))
    this.#sub.on('close', () => {
      if (this.#subscribed) this.#lost = true
      this.#subscribed = false
    })
    const subscribe = () => {
      clearTimeout(this.#retry)
      if (this.#closed || this.#sub.status !== 'ready') return
      this.#sub.subscribe(this.#eventsChannel, this.#broadcastChannel).then(() => {
        if (this.#closed) return
        outage.ok('Event fan-out subscribed to Redis again')
        this.#subscribed = true
        const afterLoss = this.#lost
        this.#lost = false
        handlers.subscribed(afterLoss)
      }, (err: unknown) => {
        outage.fail(err, 'Event fan-out could not subscribe to Redis; retrying')
        this.#retry = setTimeout(subscribe, 1000).unref()
      })
    }
    this.#sub.on('ready', subscribe)
    this.#sub.on('message', (channel: string, message: string) => {
      if (channel === this.#eventsChannel) {
        const a = message.indexOf(' ')
        const b = message.indexOf(' ', a + 1)
        if (a > 0 && b > a) handlers.event({ id: message.slice(0, a), nonce: message.slice(a + 1, b), data: message.slice(b + 1) })
      } else if (channel === this.#broadcastChannel) {
        try {
          const m = JSON.parse(message) as { s: string, c: string, m: unknown }
          handlers.broadcast(m.c, m.m, m.s)
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'Ignored a malformed broadcast message')
        }
      }
    })
  }

  /** Whether commands can be sent now (the shared connection is up). */
  get commandReady (): boolean { return this.#redis.status === 'ready' }

  /** Appends to the stream and publishes; resolves to the stream id. */
  async publish (nonce: string, data: string): Promise<string> {
    return String(await runScript(this.#redis, PUBLISH, [this.#stream], [this.#maxLen, nonce, data, this.#eventsChannel]))
  }

  async replay (after: string): Promise<ReplayResult> {
    const [covered, tail, raw] = await runScript(this.#redis, REPLAY, [this.#stream], [after]) as [number, string, Array<[string, string[]]>]
    const entries = raw.map(([id, fields]) => {
      const f: Record<string, string> = {}
      for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!
      return { id, nonce: f.n ?? '', data: f.e ?? 'null' }
    })
    return { covered: covered === 1, tail, entries }
  }

  /** The newest stream id, or 0-0 for an empty stream. */
  async tail (): Promise<string> {
    const last = await this.#redis.xrevrange(this.#stream, '+', '-', 'COUNT', 1)
    return last[0]?.[0] ?? '0-0'
  }

  async broadcast (channel: string, message: unknown, source: string): Promise<void> {
    await this.#redis.publish(this.#broadcastChannel, JSON.stringify({ s: source, c: channel, m: message }))
  }

  close (): void {
    this.#closed = true
    clearTimeout(this.#retry)
    this.#sub.disconnect()
  }
}
