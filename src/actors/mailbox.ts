/**
 * Per-proxy mailboxes in front of the worker pool. Each proxy gets a bounded
 * queue and a bounded number of runs in flight, so a flood on one proxy fills
 * its own mailbox (503 with Retry-After at once) instead of starving the others.
 *
 *   request ─> mailbox[proxy] (queue ≤ maxQueue, running ≤ maxConcurrent) ─> pool
 */
import { gatewayTimeout, serviceUnavailable } from '../common/errors.js'

export interface MailboxLimits { maxQueue: number, maxConcurrent: number }

interface Job<T> { run: () => Promise<T>, deadline: number, resolve: (v: T) => void, reject: (e: unknown) => void }

export class Mailbox<T> {
  private readonly queue: Array<Job<T>> = []
  private running = 0
  rejected = 0
  completed = 0

  constructor (public limits: MailboxLimits) {}

  get queued (): number { return this.queue.length }
  get inFlight (): number { return this.running }

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
      job.run().then(job.resolve, job.reject).finally(() => {
        this.running--
        this.completed++
        this.pump()
      })
    }
  }
}

export class Mailboxes<T> {
  private readonly boxes = new Map<string, Mailbox<T>>()
  constructor (private readonly defaults: MailboxLimits) {}

  get (id: string): Mailbox<T> {
    let m = this.boxes.get(id)
    if (m === undefined) this.boxes.set(id, m = new Mailbox<T>(this.defaults))
    return m
  }

  stats (): Record<string, { queued: number, running: number, rejected: number, completed: number }> {
    return Object.fromEntries([...this.boxes].map(([id, m]) => [id, { queued: m.queued, running: m.inFlight, rejected: m.rejected, completed: m.completed }]))
  }
}

