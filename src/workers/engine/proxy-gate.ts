/**
 * A proxy's budget inside a worker thread: its runs and their sub-runs together execute at most
 * the proxy's max_concurrency at once. The main thread's mailbox admits a proxy's runs; without
 * this gate each admitted run could start up to 1,000 sub-runs here, and a run of sub-workflows
 * that never wait (set nodes, expressions) is one long chain of microtasks: the thread took no
 * other task until the chain ended, so one fan-out proxy held every other proxy's runs for seconds.
 *
 *   run ── enter ──▶ nodes … execute_subworkflow: caller leaves ─▶ sub-run enters (next turn) …
 *                                                 caller enters again after it (next turn)
 *
 * An execution waiting for its sub-runs holds no permit, so permits are only ever held by
 * executions that can go on: no tree can wait for itself. A sub-run always starts on a later
 * turn of the event loop (setImmediate), where the thread takes other runs' messages first.
 */
export class ProxyGate {
  private active = 0
  private readonly waiting: Array<() => void> = []
  constructor (public capacity: number) {}

  get idle (): boolean { return this.active === 0 && this.waiting.length === 0 }

  /** Takes a permit; with `yieldFirst`, never before the next turn of the event loop. Rejects when `signal` aborts first. */
  async enter (signal: AbortSignal, yieldFirst: boolean): Promise<void> {
    if (yieldFirst) await new Promise(resolve => setImmediate(resolve))
    if (signal.aborted) throw new Error('stopped while waiting for its turn')
    if (this.active < this.capacity && this.waiting.length === 0) { this.active++; return }
    await new Promise<void>((resolve, reject) => {
      const go = () => { signal.removeEventListener('abort', stop); this.active++; resolve() }
      const stop = () => {
        const i = this.waiting.indexOf(go)
        if (i >= 0) this.waiting.splice(i, 1)
        reject(new Error('stopped while waiting for its turn'))
      }
      this.waiting.push(go)
      signal.addEventListener('abort', stop, { once: true })
    })
  }

  leave (): void {
    this.active--
    while (this.active < this.capacity && this.waiting.length > 0) this.waiting.shift()!()
  }
}

const gates = new Map<string, ProxyGate>()
// Past this many proxies seen, idle gates are dropped (a gate in use is kept: its runs hold it).
const MAX_GATES = 1024

/** The gate of a proxy (created on first use); the newest run's max_concurrency sets its size. */
export function gateOf (key: string, capacity: number): ProxyGate {
  let g = gates.get(key)
  if (g === undefined) {
    if (gates.size >= MAX_GATES) for (const [k, x] of gates) if (x.idle) gates.delete(k)
    gates.set(key, g = new ProxyGate(capacity))
  } else g.capacity = capacity
  return g
}
