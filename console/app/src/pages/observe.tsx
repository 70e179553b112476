/** Audit log, request logs with filters, and metrics at a glance (the last hour, per collection). */
import { useState, type FormEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { get, type Page } from '../api'
import { ErrorText, Status, formValues, when } from '../ui'
import type { Collection } from './collections'

interface LogRecord { time: string, request_id: string, collection_id: string | null, proxy_id: string | null, client_id: string | null, method: string, path: string, status: number, duration_ms: number, trace_id?: string | null }
interface AuditEntry { id: string, occurred_at: string, actor_sub: string | null, source: string, action: string, resource_kind: string | null, resource_id: string | null, method: string | null, path: string, status: number, tool?: string | null }

/** Filters held as a query string; the form sets them. */
function useFilters () {
  const [query, setQuery] = useState('')
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setQuery(new URLSearchParams(Object.entries(formValues(e.currentTarget)).filter(([, v]) => v !== '')).toString())
  }
  return { query, submit, setQuery }
}

function useCollections () {
  return useQuery({ queryKey: ['collections'], queryFn: async () => await get<Page<Collection>>('/collections?limit=500') })
}

export function RequestLogsPage () {
  const { query, submit, setQuery } = useFilters()
  const colls = useCollections()
  const traceShown = new URLSearchParams(query).get('trace_id')
  const logs = useQuery({ queryKey: ['request-logs', query], queryFn: async () => await get<Page<LogRecord>>(`/request-logs?limit=100&${query}`) })
  const name = (id: string | null) => colls.data?.items.find(c => c.id === id)?.name ?? id ?? '—'
  return (
    <section>
      <div className='toolbar'><h1>Request logs</h1><span className='grow' /><button type='button' className='ghost' onClick={() => { void logs.refetch() }}>Refresh</button></div>
      <form className='filters' onSubmit={submit}>
        <select name='collection_id' aria-label='Collection'><option value=''>All collections</option>{colls.data?.items.map(c => <option key={c.id} value={c.id}>{c.name}</option>)}</select>
        <select name='method' aria-label='Method'><option value=''>Any method</option>{['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].map(m => <option key={m}>{m}</option>)}</select>
        <input name='status' placeholder='Status (e.g. 404)' aria-label='Status' size={12} />
        <input name='client_id' placeholder='Client id' aria-label='Client id' />
        <input name='since' type='datetime-local' aria-label='Since' />
        <input name='trace_id' placeholder='Trace id' aria-label='Trace id' size={34} pattern='[0-9a-fA-F]{32}' />
        <button type='submit'>Filter</button>
      </form>
      {traceShown !== null && <p className='muted'>Requests of trace <code>{traceShown}</code> (the same id in your tracing backend shows its spans). <button type='button' className='ghost' onClick={() => { setQuery('') }}>Show all</button></p>}
      <ErrorText error={logs.error} />
      <table>
        <thead><tr><th>Time</th><th>Method</th><th>Path</th><th>Status</th><th>ms</th><th>Collection</th><th>Client</th><th>Trace</th></tr></thead>
        <tbody>
          {logs.data?.items.map(r => (
            <tr key={r.request_id + r.time}>
              <td>{when(r.time)}</td><td>{r.method}</td><td><code>{r.path}</code></td>
              <td><span className={`pill s${String(r.status)[0]}xx`}>{r.status}</span></td><td>{r.duration_ms}</td>
              <td>{name(r.collection_id)}</td><td className='muted'>{r.client_id ?? '—'}</td>
              <td>{r.trace_id != null
                ? <button type='button' className='ghost' title='Show every request of this trace' aria-label={`Trace ${r.trace_id}`} onClick={() => { setQuery(`trace_id=${r.trace_id!}`) }}><code>{r.trace_id}</code></button>
                : <span className='muted'>—</span>}</td>
            </tr>
          ))}
          {logs.data?.items.length === 0 && <tr><td colSpan={8} className='muted'>No requests match.</td></tr>}
        </tbody>
      </table>
    </section>
  )
}

export function AuditPage () {
  const { query, submit } = useFilters()
  const audit = useQuery({ queryKey: ['audit', query], queryFn: async () => await get<Page<AuditEntry>>(`/audit-logs?limit=100&${query}`) })
  return (
    <section>
      <div className='toolbar'><h1>Audit log</h1><span className='grow' /><button type='button' className='ghost' onClick={() => { void audit.refetch() }}>Refresh</button></div>
      <form className='filters' onSubmit={submit}>
        <input name='actor_sub' placeholder='Who (sub)' aria-label='Who' />
        <select name='resource_kind' aria-label='Resource kind'><option value=''>Any resource</option>{['collection', 'proxy', 'proxy_workflow', 'policy', 'client', 'profile', 'credential'].map(k => <option key={k}>{k}</option>)}</select>
        <input name='action' placeholder='Action (create, delete…)' aria-label='Action' />
        <select name='source' aria-label='Source'><option value=''>Every source</option><option value='rest'>REST</option><option value='mcp'>MCP</option><option value='assistant'>Assistant's tool calls</option><option value='config_file'>CONFIG_FILE loads</option></select>
        <button type='submit'>Filter</button>
      </form>
      <ErrorText error={audit.error} />
      <table>
        <thead><tr><th>Time</th><th>Who</th><th>Action</th><th>Resource</th><th>Request</th><th>Status</th></tr></thead>
        <tbody>
          {audit.data?.items.map(a => (
            <tr key={a.id}>
              <td>{when(a.occurred_at)}</td><td>{a.actor_sub ?? '—'}</td><td>{a.action}{a.tool != null && <> <code>{a.tool}</code></>}</td>
              <td>{a.resource_kind} <code className='muted'>{a.resource_id}</code></td>
              <td><code>{a.method} {a.path}</code></td><td><Status value={String(a.status)} /></td>
            </tr>
          ))}
          {audit.data?.items.length === 0 && <tr><td colSpan={6} className='muted'>Nothing recorded yet.</td></tr>}
        </tbody>
      </table>
    </section>
  )
}

interface Minute { requests: number, errors: number, latency: number[] }

/** The last hour of the request log, per collection and minute. */
async function lastHour (): Promise<Map<string, Minute[]>> {
  const since = new Date(Date.now() - 3_600_000)
  const out = new Map<string, Minute[]>()
  let cursor: string | null = null
  // Bounded: at most 10 pages of 500 records are read for the chart.
  for (let page = 0; page < 10; page++) {
    const res: Page<LogRecord> = await get(`/request-logs?limit=500&since=${since.toISOString()}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    for (const r of res.items) {
      const minute = Math.min(59, Math.floor((Date.parse(r.time) - since.getTime()) / 60_000))
      if (minute < 0) continue
      const series = out.get(r.collection_id ?? '') ?? Array.from({ length: 60 }, () => ({ requests: 0, errors: 0, latency: [] }))
      out.set(r.collection_id ?? '', series)
      series[minute].requests++
      if (r.status >= 400) series[minute].errors++
      series[minute].latency.push(r.duration_ms)
    }
    cursor = res.next_cursor
    if (cursor === null) break
  }
  return out
}

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#0891b2', '#db2777']

function Chart ({ title, series, value, unit }: { title: string, series: Array<[string, Minute[]]>, value: (m: Minute) => number, unit: string }) {
  const W = 600
  const H = 140
  const max = Math.max(1, ...series.flatMap(([, s]) => s.map(value)))
  return (
    <figure className='chart'>
      <figcaption>{title} <span className='muted'>(max {Math.round(max * 10) / 10} {unit})</span></figcaption>
      <svg viewBox={`0 0 ${W} ${H + 16}`} role='img' aria-label={title}>
        <line x1={0} y1={H} x2={W} y2={H} stroke='#ccc' />
        <text x={0} y={H + 14} fontSize={10} fill='#888'>−60 min</text>
        <text x={W} y={H + 14} fontSize={10} fill='#888' textAnchor='end'>now</text>
        {series.map(([id, s], i) => (
          <polyline key={id} fill='none' stroke={COLORS[i % COLORS.length]} strokeWidth={2}
            points={s.map((m, x) => `${(x * W) / 59},${H - (value(m) / max) * (H - 6)}`).join(' ')} />
        ))}
      </svg>
    </figure>
  )
}

const p50 = (m: Minute) => { if (m.latency.length === 0) return 0; const s = [...m.latency].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }

export function MetricsPage () {
  const colls = useCollections()
  const data = useQuery({ queryKey: ['metrics-hour'], queryFn: lastHour, refetchInterval: 30_000 })
  const series = [...(data.data ?? new Map<string, Minute[]>())].sort(([a], [b]) => a.localeCompare(b))
  const name = (id: string) => id === '' ? 'unmatched' : colls.data?.items.find(c => c.id === id)?.name ?? id
  return (
    <section>
      <div className='toolbar'><h1>Metrics</h1><span className='muted'>gateway requests over the last hour, per collection (from the request log)</span></div>
      <ErrorText error={data.error} />
      <div className='legend'>{series.map(([id, s], i) => <span key={id}><i style={{ background: COLORS[i % COLORS.length] }} /> {name(id)}: {s.reduce((n, m) => n + m.requests, 0)} requests, {s.reduce((n, m) => n + m.errors, 0)} errors</span>)}</div>
      {series.length === 0 && data.isSuccess && <p className='muted'>No gateway requests in the last hour.</p>}
      <Chart title='Requests per minute' series={series} value={m => m.requests} unit='req/min' />
      <Chart title='Errors per minute (4xx and 5xx)' series={series} value={m => m.errors} unit='err/min' />
      <Chart title='Median latency' series={series} value={p50} unit='ms' />
    </section>
  )
}
