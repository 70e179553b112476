import type { QuotaPeriod } from './types.js'

const pad = (n: number) => String(n).padStart(2, '0')

/** The UTC calendar period holding `nowMs`: a stamp naming it and the instant it ends. */
export function quotaPeriod (period: QuotaPeriod, nowMs: number): { stamp: string, endMs: number } {
  const d = new Date(nowMs)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  if (period === 'day') {
    const day = d.getUTCDate()
    return { stamp: `${y}-${pad(m + 1)}-${pad(day)}`, endMs: Date.UTC(y, m, day + 1) }
  }
  return { stamp: `${y}-${pad(m + 1)}`, endMs: Date.UTC(y, m + 1, 1) }
}

export const secondsUntil = (endMs: number, nowMs: number) => Math.max(0, Math.ceil((endMs - nowMs) / 1000))

const startOfMonth = (ms: number) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) }

/** The current period per kind, recomputed only when it ends (no Date work per hit). */
export function periodCache (): (period: QuotaPeriod, at: number) => { stamp: string, endMs: number } {
  const periods: Partial<Record<QuotaPeriod, { stamp: string, endMs: number, startMs: number }>> = {}
  return (period, at) => {
    let p = periods[period]
    if (p === undefined || at >= p.endMs || at < p.startMs) {
      const q = quotaPeriod(period, at)
      p = periods[period] = { ...q, startMs: period === 'day' ? q.endMs - 86_400_000 : startOfMonth(at) }
    }
    return p
  }
}
