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
