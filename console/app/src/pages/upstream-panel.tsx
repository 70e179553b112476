/**
 * A collection's targets with this instance's view of their health (refetched every 3 s and on
 * collection events), and a dialog to edit the targets, their weights and the balancing.
 */
import { useState, type FormEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { api, get } from '../api'
import { Dialog, ErrorText, Field, Status, formValues, when } from '../ui'
import type { Collection, Upstream } from './collections'

interface TargetHealth { url: string, weight: number, state: 'healthy' | 'unhealthy' | 'ejected', since: string, last_error: string | null, addresses: Array<{ address: string, in_flight: number }> }

export function UpstreamPanel ({ collection: c, canEdit }: { collection: Collection, canEdit: boolean }) {
  const health = useQuery({
    queryKey: ['upstream-health', c.id, c.version],
    queryFn: async () => await get<{ targets: TargetHealth[] }>(`/collections/${c.id}/upstream/health`),
    refetchInterval: 3000
  })
  const [editing, setEditing] = useState(false)
  const rows = health.data?.targets ?? c.upstream.targets.map(t => ({ ...t, state: undefined, since: null, last_error: null, addresses: [] }))
  return (
    <>
      <div className='toolbar'>
        <h2>Targets</h2>
        <span className='muted'>{c.upstream.balancing.replace('_', ' ')}{c.upstream.balancing === 'consistent_hash' ? ` on ${c.upstream.hash_on}` : ''} · health as this gateway instance sees it</span>
        <span className='grow' />
        {canEdit && <button type='button' className='ghost' onClick={() => setEditing(true)}>Edit targets</button>}
      </div>
      <ErrorText error={health.error} />
      <table aria-label='Targets'>
        <thead><tr><th>Target</th><th>Weight</th><th>Health</th><th>Since</th><th>Last error</th><th>In flight</th></tr></thead>
        <tbody>
          {rows.map(t => (
            <tr key={t.url}>
              <td><code>{t.url}</code></td>
              <td>{t.weight}</td>
              <td>{t.state !== undefined && <Status value={t.state} />}</td>
              <td className='muted'>{when(t.since)}</td>
              <td className='muted'>{t.last_error ?? ''}</td>
              <td>{t.addresses.reduce((n, a) => n + a.in_flight, 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {editing && <TargetsForm collection={c} onClose={() => setEditing(false)} />}
    </>
  )
}

/** Targets as lines of `URL [weight]`, and the balancing. */
function TargetsForm ({ collection: c, onClose }: { collection: Collection, onClose: () => void }) {
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const v = formValues(e.currentTarget)
    try {
      const targets = v.targets.split('\n').map(l => l.trim()).filter(l => l !== '').map(line => {
        const [url, weight] = line.split(/\s+/)
        if (weight !== undefined && !/^\d+$/.test(weight)) throw new Error(`The weight after ${url} must be a whole number from 1 to 1000.`)
        return weight === undefined ? { url } : { url, weight: Number(weight) }
      })
      if (targets.length === 0) throw new Error('Give at least one target URL.')
      const upstream: Partial<Upstream> = { targets: targets as Upstream['targets'], balancing: v.balancing as Upstream['balancing'] }
      if (v.balancing === 'consistent_hash') upstream.hash_on = v.hash_on
      await api('PUT', `/collections/${c.id}`, { upstream })
      onClose()
    } catch (err) { setError(err) }
  }
  return (
    <Dialog title={`Targets of ${c.name}`} onClose={onClose}>
      <form onSubmit={e => { void submit(e) }}>
        <Field label='Targets' hint='One per line: the backend base URL, then optionally its weight (1-1000, default 100).'>
          <textarea name='targets' rows={6} required defaultValue={c.upstream.targets.map(t => `${t.url} ${t.weight}`).join('\n')} />
        </Field>
        <Field label='Balancing'>
          <select name='balancing' defaultValue={c.upstream.balancing}>
            <option value='round_robin'>round robin (weighted)</option>
            <option value='least_connections'>least connections</option>
            <option value='consistent_hash'>consistent hash</option>
          </select>
        </Field>
        <Field label='Hash on' hint='For consistent hash: ip, path, header:<name> or cookie:<name>.'><input name='hash_on' defaultValue={c.upstream.hash_on} /></Field>
        <ErrorText error={error} />
        <footer><button type='button' className='ghost' onClick={onClose}>Cancel</button><button type='submit'>Save</button></footer>
      </form>
    </Dialog>
  )
}
