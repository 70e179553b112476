/**
 * The Prometheus text format (0.0.4) as OpenMetrics 1.0, for a scraper that asks
 * for it (Accept: application/openmetrics-text): a counter's family is named
 * without its `_total` suffix (its samples keep it), a counter whose samples lack
 * the suffix is declared `unknown` (OpenMetrics requires it), and the exposition
 * ends with `# EOF`. Exemplars are written by the producer (metrics.ts).
 */
export const OPENMETRICS_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8'

/** Whether an Accept header prefers OpenMetrics (Prometheus lists it first when it can store exemplars or parse it). */
export function wantsOpenMetrics (accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('application/openmetrics-text')
}

export function toOpenMetrics (text: string): string {
  const lines = text.split('\n')
  // Counter families whose samples all end in _total: renamed; the others become unknown.
  const counters = new Map<string, boolean>()
  for (const line of lines) {
    const m = /^# TYPE (\S+) counter$/.exec(line)
    if (m !== null) counters.set(m[1]!, true) // group 1 is not optional
  }
  for (const line of lines) {
    if (line.startsWith('#') || line === '') continue
    const name = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0] ?? ''
    if (counters.has(name) && !name.endsWith('_total')) counters.set(name, false)
  }
  const out: string[] = []
  for (const line of lines) {
    if (line === '') continue
    const m = /^# (HELP|TYPE) (\S+)( .*)?$/.exec(line)
    const metric = m?.[2] // groups 1 and 2 are not optional
    if (m !== null && metric !== undefined && counters.has(metric)) {
      const renamed = counters.get(metric) === true && metric.endsWith('_total')
      const family = renamed ? metric.slice(0, -'_total'.length) : metric
      const rest = m[1] === 'TYPE' && !renamed ? ' unknown' : (m[3] ?? '')
      out.push(`# ${m[1]} ${family}${rest}`)
      continue
    }
    out.push(line)
  }
  return out.join('\n') + '\n# EOF\n'
}
