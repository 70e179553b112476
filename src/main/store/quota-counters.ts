/** Quota counters persisted for the memory cache: read at start, increments added in batches. */
import type { Queryable } from './types.js'

export interface QuotaCounterRow { key: string, stamp: string, count: number, expires_at: number }

/** The counters of periods not yet over; those over are deleted first. */
export async function loadQuotaCounters (q: Queryable, now: Date): Promise<QuotaCounterRow[]> {
  await q.query('DELETE FROM quota_counters WHERE expires_at <= $1', [now.toISOString()])
  const r = await q.query('SELECT key, stamp, count, expires_at FROM quota_counters')
  return r.rows.map((x: any) => ({ key: x.key, stamp: x.stamp, count: Number(x.count), expires_at: new Date(x.expires_at).getTime() }))
}

/** Adds increments (one statement; several increments of one counter must be summed before). */
export async function addQuotaCounts (q: Queryable, rows: QuotaCounterRow[]): Promise<void> {
  if (rows.length === 0) return
  const params: unknown[] = []
  const values = rows.map(r => {
    params.push(r.key, r.stamp, r.count, new Date(r.expires_at).toISOString())
    const n = params.length
    return `($${n - 3}, $${n - 2}, $${n - 1}::integer, $${n}::timestamptz)`
  })
  await q.query(`INSERT INTO quota_counters (key, stamp, count, expires_at) VALUES ${values.join(', ')}
    ON CONFLICT (key, stamp) DO UPDATE SET count = quota_counters.count + EXCLUDED.count`, params)
}
