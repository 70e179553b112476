/**
 * Quotas survive a restart without Redis: the memory limiter's quota counters are written behind
 * to the store and read back at start. A request never waits for the database: admitted quota
 * hits are summed in memory and added to `quota_counters` every QUOTA_FLUSH_MS (one statement
 * for all keys), and once more when the service stops.
 *
 *   request ─▶ memory limiter (sync) ─▶ admitted quota hit ─▶ pending[key, period] += cost
 *   every QUOTA_FLUSH_MS, and at close ─▶ INSERT … ON CONFLICT DO UPDATE count = count + increment
 *   start ─▶ rows of periods not over ─▶ limiter.seed
 *
 * The window: hits admitted after the last write are lost if the process dies without stopping
 * (kill -9, power loss): at most QUOTA_FLUSH_MS of them, so a quota may admit that many more
 * after such a crash. A stop by SIGTERM writes them first. A failed write keeps its increments
 * for the next one. Counts are summed across instances that share the store, but each instance
 * admits from its own memory: without Redis, quotas are exact per instance only.
 */
import type { QuotaCounters } from '../cache/memory-limiter.js'
import type { Logger } from '../logger.js'
import { addQuotaCounts, loadQuotaCounters, type QuotaCounterRow } from '../store/quota-counters.js'
import type { Store } from '../store/types.js'

export interface QuotaPersistence {
  /** Writes the increments so far. */
  flush (): Promise<void>
  /** Stops the timer and writes what is left. */
  close (): Promise<void>
}

export async function persistQuotas (counters: QuotaCounters, store: Store, logger: Logger, flushMs: number): Promise<QuotaPersistence> {
  for (const r of await loadQuotaCounters(store, new Date())) counters.seed(r.key, r.stamp, r.expires_at, r.count)
  let pending = new Map<string, QuotaCounterRow>()
  counters.listen((key, stamp, endMs, cost) => {
    const id = `${key}\n${stamp}`
    const row = pending.get(id)
    if (row === undefined) pending.set(id, { key, stamp, count: cost, expires_at: endMs })
    else row.count += cost
  })
  let writing: Promise<void> = Promise.resolve()
  let failing = false
  const write = async (): Promise<void> => {
    if (pending.size === 0) return
    const batch = pending
    pending = new Map()
    try {
      await addQuotaCounts(store, [...batch.values()])
      if (failing) logger.info('quota counters are written again')
      failing = false
    } catch (err) {
      // Kept for the next write: increments are added, so nothing is counted twice.
      for (const [id, row] of batch) {
        const now = pending.get(id)
        if (now === undefined) pending.set(id, row)
        else now.count += row.count
      }
      if (!failing) logger.warn({ err: (err as Error).message }, 'quota counters could not be written; they are kept in memory and retried')
      failing = true
    }
  }
  // One write at a time, in order.
  const flush = async (): Promise<void> => { writing = writing.then(write); await writing }
  const timer = setInterval(() => { void flush() }, flushMs)
  timer.unref()
  return {
    flush,
    async close () {
      clearInterval(timer)
      await flush()
    }
  }
}
