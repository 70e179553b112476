/**
 * The event hub: management routes publish change hints, SSE streams subscribe.
 *
 *   publish ──(Redis)──▶ XADD+PUBLISH ──▶ every instance ──▶ deliver ──▶ window + subscribers
 *      └──(no Redis, or it failed)──────────────────────────▶ deliver (local id)
 *
 * Delivery never runs inside the publisher's turn: events queue and go out
 * from a later turn of the event loop, `FANOUT_SLICE` subscribers per turn,
 * so the management answer that published a change is written before the
 * first subscriber's frame, and other answers interleave with a large
 * fan-out instead of waiting for its last subscriber.
 *
 *   deliver ─▶ pending (in order) ─setImmediate─▶ window.add, then subscribers
 *                                                  in slices, one event at a time
 *
 * Each event is delivered once per instance: the origin delivers when its
 * publish is acknowledged, and the copy that comes back over pub/sub (or from
 * a catch-up read) is dropped by its nonce. Subscribers replay from the Redis
 * stream (or the local window) when they reconnect with the last id they saw.
 */
import { randomBytes } from 'node:crypto'
import type { Config } from '../config/config.js'
import type { RedisLike } from '../cache/redis.js'
import { createOutageLog } from '../cache/redis.js'
import type { Logger } from '../logger.js'
import { RedisFanout, type StreamEntry } from './redis-fanout.js'
import { ReplayWindow } from './replay-window.js'
import { compareStreamIds, isStreamId } from './stream-id.js'
import { SubscriptionQueue, type EventItem, type StreamItem, type Subscription } from './subscription.js'
import type { EventInput, EventSink, ManagementEvent } from './types.js'

export type { EndReason, StreamItem, Subscription } from './subscription.js'

export interface EventHubOptions {
  config: Pick<Config, 'CACHE_TYPE'>
  logger: Logger
  /** The shared-state connection; required when CACHE_TYPE is redis. */
  redis?: RedisLike
  /** Prefix of the stream key and channels; default `gatehouse:`. */
  keyPrefix?: string
  /** Events kept for replay (locally, and at least this many in Redis); default 1000. */
  replayWindow?: number
  /** Items a subscriber may fall behind before it is cut off; default 1024. */
  subscriberBuffer?: number
}

const CATCH_UP_TRIES = 20
/** Subscribers written to per turn of the event loop (about 5 ms of sends at 10 µs each). */
const FANOUT_SLICE = 500
const CATCH_UP_DELAY_MS = 250

export class EventHub implements EventSink {
  readonly #logger: Logger
  readonly #instanceId = randomBytes(6).toString('hex')
  readonly #subs = new Set<SubscriptionQueue>()
  readonly #window: ReplayWindow
  readonly #bound: number
  readonly #fanout: RedisFanout | undefined
  readonly #outage
  /** Nonces of recently delivered events, oldest first (a Set keeps insertion order). */
  readonly #seen = new Set<string>()
  readonly #seenCap: number
  readonly #broadcastHandlers = new Map<string, Set<(message: unknown) => void>>()
  readonly #reconnectHandlers = new Set<() => void | Promise<void>>()
  #seq = 0
  #localSeq = 0
  #lastStreamId: string | undefined
  /** Events (and resyncs) accepted but not yet written to every subscriber, oldest first; a resync's empty id means the newest id when it is sent. */
  readonly #pending: Array<EventItem | { type: 'resync', id: string }> = []
  /** The item being written: the subscribers it goes to (those present when it entered the window) and how far it got. */
  #sending: { item: StreamItem, subs: SubscriptionQueue[], next: number } | undefined
  #flushScheduled = false
  #closed = false
  #markReady!: () => void
  readonly #ready = new Promise<void>(resolve => { this.#markReady = resolve })

  constructor (opts: EventHubOptions) {
    if (opts.config.CACHE_TYPE === 'redis' && opts.redis === undefined) throw new Error('createEventHub: CACHE_TYPE is redis but no Redis connection was given')
    this.#logger = opts.logger
    this.#bound = opts.subscriberBuffer ?? 1024
    const windowSize = opts.replayWindow ?? 1000
    this.#seenCap = Math.max(4096, windowSize * 4)
    this.#window = new ReplayWindow(windowSize, `${this.#instanceId}.0`)
    this.#outage = createOutageLog(opts.logger, 'events')
    if (opts.redis !== undefined) {
      this.#fanout = new RedisFanout(opts.redis, opts.logger, { keyPrefix: opts.keyPrefix ?? 'gatehouse:', maxLen: windowSize }, {
        event: entry => this.#deliverEntry(entry),
        broadcast: (channel, message, source) => { if (source !== this.#instanceId) this.#applyBroadcast(channel, message) },
        subscribed: afterLoss => { void this.#onSubscribed(afterLoss) }
      })
    } else {
      this.#markReady()
    }
  }

  /** Resolves once the hub listens on Redis (at once without Redis); never rejects. */
  async ready (): Promise<void> {
    await this.#ready
  }

  /** Local subscribers connected now. */
  get subscriberCount (): number { return this.#subs.size }

  /** Stamps the envelope and delivers to every subscriber of every instance. Never throws. */
  publish (input: EventInput): void {
    if (this.#closed) return
    const event = { ...input, schema_version: 1, occurred_at_unix: Math.floor(Date.now() / 1000) } as ManagementEvent
    const data = JSON.stringify(event)
    const nonce = `${this.#instanceId}:${++this.#seq}`
    const local = () => this.#deliver({ type: 'event', id: `${this.#instanceId}.${++this.#localSeq}`, data, event }, nonce)
    const fanout = this.#fanout
    if (fanout === undefined) return local()
    fanout.publish(nonce, data).then(id => {
      this.#outage.ok('Events go through Redis again')
      this.#deliver({ type: 'event', id, data, event }, nonce)
    }, (err: unknown) => {
      this.#outage.fail(err, 'Events cannot reach Redis; delivering on this instance only until it returns')
      local()
    })
  }

  /**
   * A new subscriber. Without `lastEventId` it starts with a `position` item;
   * with one it first gets the events after it, or a `resync` item when they
   * are no longer kept.
   */
  subscribe (opts: { lastEventId?: string } = {}): Subscription {
    const sub = new SubscriptionQueue(this.#bound)
    if (this.#closed) {
      sub.end('hub_closed')
      return sub
    }
    this.#subs.add(sub)
    sub.onEnd(() => this.#subs.delete(sub))
    const last = opts.lastEventId
    if (last === undefined || last === '') {
      sub.push({ type: 'position', id: this.#window.latestId() })
      return sub
    }
    const fanout = this.#fanout
    if (fanout === undefined || !isStreamId(last) || !fanout.commandReady) {
      sub.pushReplay(this.#localReplay(last))
      return sub
    }
    sub.beginJoin()
    fanout.replay(last).then(r => {
      const items: StreamItem[] = r.covered ? r.entries.map(e => this.#toItem(e)).filter(i => i !== undefined) : [{ type: 'resync', id: r.tail }]
      sub.finishJoin(items, r.covered ? (r.entries.at(-1)?.id ?? last) : r.tail)
    }, (err: unknown) => {
      this.#outage.fail(err, 'Events cannot reach Redis; replaying from this instance only until it returns')
      sub.finishJoin(this.#localReplay(last), undefined)
    })
    return sub
  }

  /** Sends `message` to the `channel` handlers of every instance, this one included. */
  broadcast (channel: string, message: unknown): void {
    if (this.#closed) return
    const copy = JSON.parse(JSON.stringify(message)) as unknown
    queueMicrotask(() => this.#applyBroadcast(channel, copy))
    this.#fanout?.broadcast(channel, message, this.#instanceId).catch((err: unknown) =>
      this.#outage.fail(err, 'Broadcasts cannot reach Redis; applied on this instance only until it returns'))
  }

  /** Handles broadcasts on `channel`; returns the function that stops it. */
  onBroadcast (channel: string, cb: (message: unknown) => void): () => void {
    let set = this.#broadcastHandlers.get(channel)
    if (set === undefined) this.#broadcastHandlers.set(channel, set = new Set())
    set.add(cb)
    return () => { set.delete(cb) }
  }

  /** Runs `cb` after a lost Redis subscription is restored (and missed events caught up). */
  onReconnect (cb: () => void | Promise<void>): () => void {
    this.#reconnectHandlers.add(cb)
    return () => { this.#reconnectHandlers.delete(cb) }
  }

  /** Ends every local subscription (their streams close; clients reconnect elsewhere with Last-Event-ID) while events still flow. */
  endSubscriptions (): void {
    for (const sub of [...this.#subs]) sub.end('hub_closed')
  }

  /** Ends every subscription and leaves Redis. */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const sub of [...this.#subs]) sub.end('hub_closed')
    this.#fanout?.close()
  }

  #deliver (item: EventItem, nonce: string): void {
    if (this.#closed || this.#seen.has(nonce)) return
    this.#seen.add(nonce)
    if (this.#seen.size > this.#seenCap) this.#seen.delete(this.#seen.values().next().value as string)
    if (isStreamId(item.id) && (this.#lastStreamId === undefined || compareStreamIds(item.id, this.#lastStreamId) > 0)) this.#lastStreamId = item.id
    this.#pending.push(item)
    this.#scheduleFlush()
  }

  #scheduleFlush (): void {
    if (this.#flushScheduled) return
    this.#flushScheduled = true
    setImmediate(() => { this.#flushScheduled = false; this.#flush() })
  }

  /** Writes up to FANOUT_SLICE subscribers' worth of pending events, then yields to the loop if more remain. */
  #flush (): void {
    let budget = FANOUT_SLICE
    while (budget > 0 && !this.#closed) {
      if (this.#sending === undefined) {
        let item = this.#pending.shift()
        if (item === undefined) return
        // Entering the window and taking the subscriber list at one moment: a subscriber that
        // joins later starts at a position that already covers this event.
        if (item.type === 'event') {
          this.#window.add(item)
        } else {
          if (item.id === '') item = { type: 'resync', id: this.#window.latestId() }
          this.#window.reset(item.id)
        }
        this.#sending = { item, subs: [...this.#subs], next: 0 }
      }
      const s = this.#sending
      const end = Math.min(s.subs.length, s.next + budget)
      for (let i = s.next; i < end; i++) s.subs[i]!.push(s.item)
      budget -= end - s.next
      s.next = end
      if (end === s.subs.length) this.#sending = undefined
    }
    if (!this.#closed && (this.#sending !== undefined || this.#pending.length > 0)) this.#scheduleFlush()
  }

  #deliverEntry (entry: StreamEntry): void {
    const item = this.#toItem(entry)
    if (item !== undefined) this.#deliver(item, entry.nonce)
  }

  #toItem (entry: StreamEntry): EventItem | undefined {
    try {
      return { type: 'event', id: entry.id, data: entry.data, event: JSON.parse(entry.data) as ManagementEvent }
    } catch {
      this.#logger.warn({ id: entry.id }, 'Ignored a malformed event from Redis')
      return undefined
    }
  }

  #localReplay (last: string): StreamItem[] {
    return this.#window.after(last) ?? [{ type: 'resync', id: this.#window.latestId() }]
  }

  #applyBroadcast (channel: string, message: unknown): void {
    for (const cb of this.#broadcastHandlers.get(channel) ?? []) {
      try {
        cb(message)
      } catch (err) {
        this.#logger.error({ err, channel }, 'A broadcast handler failed')
      }
    }
  }

  async #onSubscribed (afterLoss: boolean): Promise<void> {
    const fanout = this.#fanout!
    let done = false
    for (let i = 0; i < CATCH_UP_TRIES && !done && !this.#closed; i++) {
      try {
        if (!afterLoss) {
          if (this.#lastStreamId === undefined) this.#window.setOrigin(this.#lastStreamId = await fanout.tail())
        } else {
          await this.#catchUp(fanout)
        }
        done = true
      } catch {
        await new Promise(resolve => setTimeout(resolve, CATCH_UP_DELAY_MS))
      }
    }
    this.#markReady()
    if (!afterLoss || this.#closed) return
    if (!done) {
      // What was missed cannot be read back: every subscriber refetches.
      this.#pending.push({ type: 'resync', id: '' })
      this.#scheduleFlush()
    }
    this.#logger.info('Events resubscribed to Redis')
    for (const cb of this.#reconnectHandlers) {
      try {
        await cb()
      } catch (err) {
        this.#logger.error({ err }, 'A reconnect handler failed')
      }
    }
  }

  /** Delivers what was published while the subscription was down, or tells every subscriber to resync. */
  async #catchUp (fanout: RedisFanout): Promise<void> {
    const r = this.#lastStreamId === undefined ? undefined : await fanout.replay(this.#lastStreamId)
    if (r?.covered === true) {
      for (const e of r.entries) this.#deliverEntry(e)
      return
    }
    const tail = r?.tail ?? await fanout.tail()
    this.#lastStreamId = tail
    this.#pending.push({ type: 'resync', id: tail })
    this.#scheduleFlush()
  }
}

export function createEventHub (opts: EventHubOptions): EventHub {
  return new EventHub(opts)
}
