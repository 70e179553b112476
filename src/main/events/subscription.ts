/**
 * One subscriber's bounded queue between the hub (push, never waits) and its
 * reader, which either pulls (`next`) or takes items as they come (`attach`:
 * the hub's push calls its sink in the same turn, no promise per item). A
 * reader that falls `bound` items behind is cut off: its queue is dropped and
 * `next` answers undefined, so one stalled client costs memory up to the
 * bound and never slows the others.
 *
 *   hub ─push─▶ [held while joining] ─▶ [queue ≤ bound (+ replay)] ─next─▶ reader
 *                                    └─ sink flowing, queue empty ─▶ sink(item)
 *                                       (sink answers false: queue until resume)
 */
import type { ManagementEvent } from './types.js'
import { compareStreamIds, isStreamId } from './stream-id.js'

export type StreamItem =
  /** A management event; `data` is its JSON, serialised once for every subscriber. */
  | { type: 'event', id: string, data: string, event: ManagementEvent }
  /** Events may have been missed: refetch. `id` is where the stream resumes. */
  | { type: 'resync', id: string }
  /** Where the stream starts, so a reconnect can ask for what came after. */
  | { type: 'position', id: string }

export type EventItem = Extract<StreamItem, { type: 'event' }>

/** `closed`: by the reader; `overflow`: cut off for falling behind; `hub_closed`: the hub shut down. */
export type EndReason = 'closed' | 'overflow' | 'hub_closed'

export interface Subscription extends AsyncIterable<StreamItem> {
  /** The next item, waiting for one; undefined once the subscription has ended. */
  next (): Promise<StreamItem | undefined>
  /** Ends the subscription (the reader is done). */
  close (): void
  /** Why it ended, once it has. */
  readonly ended: EndReason | undefined
  /** Called once when the subscription ends, at once if it already has. */
  onEnd (cb: (reason: EndReason) => void): void
  /**
   * Push mode instead of `next`: every item goes to `sink` as it comes, in order, until the sink
   * answers false (its own buffer is full); later items then wait here (within the bound) until
   * `resume`. Queued items are handed over at once.
   */
  attach (sink: (item: StreamItem) => boolean): void
  /** The sink has room again: hands it queued items until it answers false or none are left. */
  resume (): void
}

export class SubscriptionQueue implements Subscription {
  #queue: StreamItem[] = []
  #held: StreamItem[] | undefined
  #allowance = 0
  #waiter: ((item: StreamItem | undefined) => void) | undefined
  #sink: ((item: StreamItem) => boolean) | undefined
  #flowing = false
  #ended: EndReason | undefined
  #onEnd: Array<(reason: EndReason) => void> = []
  /** Stream ids at or below this were replayed: the live copy is a duplicate. */
  #floor: string | undefined
  readonly #bound: number

  constructor (bound: number) {
    this.#bound = bound
  }

  get ended () { return this.#ended }

  push (item: StreamItem): void {
    this.#offer(item, false)
  }

  /** Replayed items go first and do not count against the bound. */
  pushReplay (items: StreamItem[]): void {
    for (const item of items) this.#offer(item, true)
  }

  #offer (item: StreamItem, replay: boolean): void {
    if (this.#ended !== undefined) return
    if (this.#floor !== undefined && item.type === 'event' && isStreamId(item.id) && compareStreamIds(item.id, this.#floor) <= 0) return
    if (this.#held !== undefined) {
      this.#held.push(item)
      if (this.#held.length > this.#bound) this.end('overflow')
      return
    }
    if (this.#waiter !== undefined) {
      const w = this.#waiter
      this.#waiter = undefined
      w(item)
      return
    }
    if (this.#flowing && this.#queue.length === 0) {
      this.#flowing = this.#sink!(item)
      return
    }
    this.#queue.push(item)
    // Replayed items sit at the front of the queue (they are offered before any live item).
    if (replay) this.#allowance++
    else if (this.#queue.length > this.#bound + this.#allowance) this.end('overflow')
  }

  attach (sink: (item: StreamItem) => boolean): void {
    this.#sink = sink
    this.resume()
  }

  resume (): void {
    if (this.#sink === undefined) return
    this.#flowing = true
    while (this.#flowing && this.#ended === undefined) {
      const item = this.#take()
      if (item === undefined) return
      this.#flowing = this.#sink(item)
    }
  }

  #take (): StreamItem | undefined {
    const item = this.#queue.shift()
    if (item !== undefined && this.#allowance > 0) this.#allowance--
    return item
  }

  /** Holds live items until `finishJoin`, while the replay is fetched. */
  beginJoin (): void {
    this.#held ??= []
  }

  finishJoin (replay: StreamItem[], floor: string | undefined): void {
    const held = this.#held ?? []
    this.#held = undefined
    this.pushReplay(replay)
    this.#floor = floor
    const replayed = new Set(replay.map(i => i.id))
    for (const item of held) if (!replayed.has(item.id)) this.push(item)
  }

  async next (): Promise<StreamItem | undefined> {
    const item = this.#take()
    if (item !== undefined) return item
    if (this.#ended !== undefined) return undefined
    return await new Promise(resolve => { this.#waiter = resolve })
  }

  close (): void {
    this.end('closed')
  }

  end (reason: EndReason): void {
    if (this.#ended !== undefined) return
    this.#ended = reason
    this.#queue = []
    this.#held = undefined
    this.#waiter?.(undefined)
    this.#waiter = undefined
    this.#sink = undefined
    this.#flowing = false
    for (const cb of this.#onEnd.splice(0)) cb(reason)
  }

  onEnd (cb: (reason: EndReason) => void): void {
    if (this.#ended !== undefined) cb(this.#ended)
    else this.#onEnd.push(cb)
  }

  async * [Symbol.asyncIterator] (): AsyncIterator<StreamItem> {
    for (let item = await this.next(); item !== undefined; item = await this.next()) yield item
  }
}
