/**
 * Retry budget (Envoy's idea): retries may be at most `percent` of the requests of the last ten
 * seconds, and never fewer than 3, so a failing backend sees a bounded extra load instead of a
 * retry storm. Counted in ten one-second buckets.
 */
const BUCKETS = 10
const MIN_RETRIES = 3

export class RetryBudget {
  private readonly requests = new Uint32Array(BUCKETS)
  private readonly retries = new Uint32Array(BUCKETS)
  private second = 0

  constructor (private readonly percent: number) {}

  // Indexes below are modulo BUCKETS or under it: always in range of the two arrays.
  request (now: number): void { this.roll(now); this.requests[this.second % BUCKETS]!++ }

  /** Takes one retry from the budget when there is one left. */
  tryRetry (now: number): boolean {
    this.roll(now)
    let req = 0
    let ret = 0
    for (let i = 0; i < BUCKETS; i++) { req += this.requests[i]!; ret += this.retries[i]! }
    const cap = this.percent === 0 ? 0 : Math.max(MIN_RETRIES, Math.floor(req * this.percent / 100))
    if (ret >= cap) return false
    this.retries[this.second % BUCKETS]!++
    return true
  }

  private roll (now: number): void {
    const s = Math.floor(now / 1000)
    if (s === this.second) return
    // Clear the buckets of the seconds skipped since the last call (all of them after a long pause).
    for (let t = Math.max(this.second + 1, s - BUCKETS + 1); t <= s; t++) { this.requests[t % BUCKETS] = 0; this.retries[t % BUCKETS] = 0 }
    this.second = s
  }
}
