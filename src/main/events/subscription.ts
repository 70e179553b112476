/**
 * One subscriber's bounded queue between the hub (push, never waits) and its
 * reader (next). A reader that falls `bound` items behind is cut off: its
 * queue is dropped and `next` answers undefined, so one stalled client costs
 * memory up to the bound and never slows the others.
 *
 *   hub ─push─▶ [held while joining] ─▶ [queue ≤ bound (+ replay)] ─next─▶ reader
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
}

export class SubscriptionQueue implements Subscription {
  #queue: StreamItem[] = []
  #held: StreamItem[] | undefined
  #allowance = 0
  #waiter: ((item: StreamItem | undefined) => void) | undefined
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
    this.#queue.push(item)
    if (this.#queue.length > this.#bound + this.#allowance) this.end('overflow')
  }

  /** Replayed items go first and do not count against the bound. */
  pushReplay (items: StreamItem[]): void {
    this.#allowance += items.length
    for (const item of items) this.push(item)
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
    const item = this.#queue.shift()
    if (item !== undefined) {
      if (this.#allowance > 0) this.#allowance--
      return item
    }
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
