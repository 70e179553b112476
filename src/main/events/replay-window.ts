import type { EventItem } from './subscription.js'

/**
 * The last `capacity` events this instance delivered, in delivery order: the
 * replay source without Redis, and the fallback while Redis is away.
 * `origin` names the position before the first entry; it is covered only
 * while nothing has been dropped since.
 */
export class ReplayWindow {
  #entries: EventItem[] = []
  #origin: string
  #dropped = false
  readonly #capacity: number

  constructor (capacity: number, origin: string) {
    this.#capacity = capacity
    this.#origin = origin
  }

  get size () { return this.#entries.length }

  add (item: EventItem): void {
    this.#entries.push(item)
    if (this.#entries.length > this.#capacity) {
      this.#entries.shift()
      this.#dropped = true
    }
  }

  /** The id a new subscriber starts from. */
  latestId (): string {
    return this.#entries.at(-1)?.id ?? this.#origin
  }

  /** Events after `id`, or undefined when the window no longer reaches back to it. */
  after (id: string): EventItem[] | undefined {
    if (id === this.#origin && !this.#dropped) return this.#entries.slice()
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      if (this.#entries[i]!.id === id) return this.#entries.slice(i + 1)
    }
    return undefined
  }

  /** Forgets everything and starts again at `origin`: ids from before are no longer covered. */
  reset (origin: string): void {
    this.#entries = []
    this.#origin = origin
    this.#dropped = false
  }

  /** Sets the origin while nothing has been delivered yet. */
  setOrigin (origin: string): void {
    if (this.#entries.length === 0 && !this.#dropped) this.#origin = origin
  }
}
