/**
 * A strict reader of the Prometheus text exposition format (0.0.4) for tests:
 * throws on any line a scraper would reject, checks that every sample belongs to a
 * family declared by # TYPE before it, and that histograms are cumulative with
 * the +Inf bucket equal to _count.
 */
export interface Sample { name: string, labels: Record<string, string>, value: number }

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`)
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/

export function parsePrometheus (text: string): Sample[] {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  const types = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, name = '', type = ''] = line.split(' ').slice(1)
      if (!new RegExp(`^${NAME}$`).test(name) || !['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(type)) throw new Error(`bad TYPE line: ${line}`)
      if (types.has(name)) throw new Error(`family declared twice: ${name}`)
      types.set(name, type)
      continue
    }
    if (line.startsWith('# HELP ') || line === '') continue
    if (line.startsWith('#')) throw new Error(`unknown comment line: ${line}`)
    const m = SAMPLE.exec(line)
    if (m === null) throw new Error(`bad sample line: ${line}`)
    const [, name = '', , valueText = ''] = m // groups 1 and 3 are not optional
    const labels: Record<string, string> = {}
    let rest = m[2] ?? ''
    while (rest !== '') {
      const l = LABEL.exec(rest)
      if (l === null) throw new Error(`bad labels: ${line}`)
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
      rest = rest.slice(l[0].length)
    }
    const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText)
    if (Number.isNaN(value) && valueText !== 'NaN') throw new Error(`bad value: ${line}`)
    const family = [...types.keys()].find(f => name === f || (types.get(f) === 'histogram' && [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name)))
    if (family === undefined) throw new Error(`sample without a # TYPE before it: ${line}`)
    samples.push({ name, labels, value })
  }
  // Histograms: buckets non-decreasing per series, +Inf equal to _count.
  for (const [family, type] of types) {
    if (type !== 'histogram') continue
    const series = new Map<string, Sample[]>()
    for (const s of samples.filter(x => x.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = s.labels
      const key = JSON.stringify(rest)
      series.set(key, [...(series.get(key) ?? []), s])
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family} buckets decrease for ${key}`)
      const inf = buckets.find(b => b.labels.le === '+Inf')
      const count = samples.find(x => x.name === `${family}_count` && JSON.stringify(x.labels) === key)
      if (inf === undefined || count === undefined || inf.value !== count.value) throw new Error(`${family} +Inf bucket and _count disagree for ${key}`)
    }
  }
  return samples
}
