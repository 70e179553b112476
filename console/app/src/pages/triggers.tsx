/**
 * Workflows that start on their own (cron, broker, IMAP): each production trigger's state, which
 * instance runs it, its last run and last error, the next cron slot or the broker lag. The list
 * refetches on every trigger_status event (a trigger started, stopped, failed or recovered on any
 * instance) and on workflow and proxy changes, so it is live without polling.
 */
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page } from '../api'
import { ErrorText, Status, when } from '../ui'

export interface TriggerHealth {
  proxy_id: string
  workflow_id: string
  proxy_name: string
  trigger_type: string
  node_id: string
  state: 'running' | 'failing' | 'stopped'
  stopped_reason: string | null
  owner: string | null
  last_run_at: string | null
  last_run_status: string | null
  last_execution_id: string | null
  last_error: string | null
  last_error_at: string | null
  next_slot: string | null
  lag: number | null
}

const KIND: Record<string, string> = { cron_trigger: 'Schedule', broker_consumer: 'Kafka', imap_trigger: 'IMAP' }

export function TriggersPage () {
  // Events come on state changes; last runs, next slots and lag move on their own, so the list also refreshes every 5 s.
  const triggers = useQuery({ queryKey: ['triggers'], queryFn: async () => await get<Page<TriggerHealth>>('/triggers'), refetchInterval: 5000 })
  return (
    <section>
      <div className='toolbar'><h1>Triggers</h1><span className='grow' /><span className='muted'>Workflows that start on a schedule, a Kafka message or an e-mail</span></div>
      <ErrorText error={triggers.error} />
      <table aria-label='Triggers'>
        <thead><tr><th>Proxy</th><th>Trigger</th><th>State</th><th>Last run</th><th>Next</th><th>Last error</th><th>Instance</th></tr></thead>
        <tbody>
          {triggers.data?.items.map(h => (
            <tr key={h.proxy_id} aria-label={h.proxy_name}>
              <td><Link to={`/proxies/${h.proxy_id}/workflow`}>{h.proxy_name}</Link></td>
              <td>{KIND[h.trigger_type] ?? h.trigger_type}</td>
              <td><Status value={h.state} />{h.stopped_reason !== null && <div className='muted'>{h.stopped_reason}</div>}</td>
              <td>{h.last_run_at === null ? <span className='muted'>never</span> : <>{when(h.last_run_at)} {h.last_run_status !== null && <Status value={h.last_run_status} />}</>}</td>
              <td>{h.next_slot !== null ? when(h.next_slot) : h.lag !== null ? `${h.lag} behind` : ''}</td>
              <td>{h.last_error !== null && <><span className='error-text'>{h.last_error}</span> <span className='muted'>{when(h.last_error_at)}</span></>}</td>
              <td className='muted'><code>{h.owner ?? '—'}</code></td>
            </tr>
          ))}
          {triggers.data?.items.length === 0 && <tr><td colSpan={7} className='muted'>No workflow starts on its own yet: give a proxy's workflow a cron, Kafka or IMAP trigger.</td></tr>}
        </tbody>
      </table>
    </section>
  )
}
