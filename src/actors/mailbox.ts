/**
 * Per-proxy mailboxes in front of the worker pool. Each proxy gets a bounded
 * queue and a bounded number of runs in flight, so a flood on one proxy fills
 * its own mailbox (503 with Retry-After at once) instead of starving the others.
 *
 *   request ─> mailbox[proxy] (queue ≤ maxQueue, running ≤ maxConcurrent) ─> pool
 *
 * The served configuration sets the limits (configure, at start and at every reload) and forgets
 * the mailboxes of proxies that went; a run never changes them.
 */
import { gatewayTimeout, serviceUnavailable } from '../common/errors.js'

export interface MailboxLimits { maxQueue: number, maxConcurrent: number }

interface Job<T> { run: () => Promise<T>, deadline: number, resolve: (v: T) => void, reject: (e: unknown) => void }

export class Mailbox<T> {
  private readonly queue: Array<Job<T>> = []
  private running = 0
  rejected = 0
  completed = 0

  /** `onIdle`: called whenever the last queued or running job is done. */
  constructor (public limits: MailboxLimits, private readonly onIdle?: () => void) {}

  get queued (): number { return this.queue.length }
  get inFlight (): number { return this.running }
  get idle (): boolean { return this.running === 0 && this.queue.length === 0 }

  /** New limits for what has not started yet (runs in flight finish); a raised limit starts waiting jobs at once. */
  setLimits (limits: MailboxLimits): void {
    this.limits = limits
    this.pump()
  }

  submit (run: () => Promise<T>, deadline: number): Promise<T> {
    if (this.running >= this.limits.maxConcurrent && this.queue.length >= this.limits.maxQueue) {
      this.rejected++
      return Promise.reject(serviceUnavailable('This API is busy; retry shortly.', 1))
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, deadline, resolve, reject })
      this.pump()
    })
  }

  private pump (): void {
    while (this.running < this.limits.maxConcurrent && this.queue.length > 0) {
      const job = this.queue.shift()!
      if (Date.now() >= job.deadline) { job.reject(gatewayTimeout('The request waited too long for this API to be free.')); continue }
      this.running++
      // The slot is free (and the next job started) before the caller hears the answer.
      job.run().then(v => { this.done(); job.resolve(v) }, (err: unknown) => { this.done(); job.reject(err) })
    }
    if (this.idle) this.onIdle?.()
  }

  private done (): void {
    this.running--
    this.completed++
    this.pump()
  }
}

export interface MailboxStats { queued: number, running: number, rejected: number, completed: number, max_concurrency: number, max_queue: number }

/**
 * The mailboxes by proxy id. A configured proxy's mailbox stays until it is forgotten; any other
 * (a builder run of a proxy the gateway does not serve) gets the default limits and is dropped as
 * soon as it is idle, so the map holds the served workflow proxies plus whatever is running.
 */
export class Mailboxes<T> {
  private readonly boxes = new Map<string, Mailbox<T>>()
  private readonly configured = new Set<string>()
  constructor (private readonly defaults: MailboxLimits) {}

  /** The proxy's mailbox: the configured one, else one with the default limits (kept while it has jobs). */
  get (id: string): Mailbox<T> {
    let m = this.boxes.get(id)
    if (m === undefined) this.boxes.set(id, m = this.create(id, this.defaults))
    return m
  }

  /** Sets a proxy's limits and keeps its mailbox until forget(id). */
  configure (id: string, limits: MailboxLimits): void {
    this.configured.add(id)
    const m = this.boxes.get(id)
    if (m === undefined) this.boxes.set(id, this.create(id, limits))
    else if (m.limits.maxConcurrent !== limits.maxConcurrent || m.limits.maxQueue !== limits.maxQueue) m.setLimits(limits)
  }

  /**
   * The proxy is no longer served with a workflow. An idle mailbox goes at once; a busy one stays,
   * with its limits, until its last job is done: those jobs still hold pool slots, and a proxy served
   * again meanwhile (published again, its collection enabled again) finds the same mailbox, so its
   * max_concurrency is never exceeded by old runs plus new ones.
   */
  forget (id: string): void {
    this.configured.delete(id)
    if (this.boxes.get(id)?.idle === true) this.boxes.delete(id)
  }

  /** Every mailbox held now, by proxy id. */
  stats (): Record<string, MailboxStats> {
    return Object.fromEntries([...this.boxes].map(([id, m]) => [id, {
      queued: m.queued, running: m.inFlight, rejected: m.rejected, completed: m.completed, max_concurrency: m.limits.maxConcurrent, max_queue: m.limits.maxQueue
    }]))
  }

  private create (id: string, limits: MailboxLimits): Mailbox<T> {
    const m: Mailbox<T> = new Mailbox<T>(limits, () => {
      if (!this.configured.has(id) && this.boxes.get(id) === m) this.boxes.delete(id)
    })
    return m
  }
}
