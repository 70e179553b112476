/**
 * One collection and its proxies. Collection events refetch both, `deleted` returns
 * to the list, `duplicated` names the copy; proxy events refetch the proxy list.
 */
import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link, useNavigate, useParams } from 'react-router'
import { api, download, get, type Page } from '../api'
import { useChangeEvents } from '../events'
import { useNotify } from '../notices'
import { useCan } from '../session'
import { ErrorText, Status } from '../ui'
import { CollectionForm, type Collection } from './collections'
import { ProxyForm, type Proxy } from './proxy-form'
import { UpstreamPanel } from './upstream-panel'

export function CollectionPage () {
  const { id = '' } = useParams()
  const navigate = useNavigate()
  const notify = useNotify()
  const canEdit = useCan('editor')
  const collection = useQuery({ queryKey: ['collection', id], queryFn: async () => await get<Collection>(`/collections/${id}`) })
  const proxies = useQuery({ queryKey: ['proxies', id], queryFn: async () => await get<Page<Proxy>>(`/proxies?collection_id=${id}&limit=500`) })
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [editing, setEditing] = useState<Proxy | 'new' | null>(null)
  const [editCollection, setEditCollection] = useState(false)
  const [error, setError] = useState<unknown>(null)

  useChangeEvents(e => {
    if (e.resource_kind !== 'collection' || e.collection_id !== id) return
    if (e.operation === 'deleted') { notify(`Collection ${collection.data?.name ?? id} was deleted.`); navigate('/collections') }
    if (e.operation === 'duplicated' && e.related_collection_id !== undefined) {
      // Notices live outside the router: a plain link.
      notify(<>Duplicated as <a href={`/collections/${e.related_collection_id}`}>{e.related_collection_id}</a></>)
    }
  })

  const run = async (fn: () => Promise<unknown>) => { setError(null); try { await fn() } catch (err) { setError(err) } }
  const c = collection.data
  if (collection.error != null) return <ErrorText error={collection.error} />
  if (c === undefined) return <p>Loading…</p>
  const items = proxies.data?.items ?? []
  const ids = [...selected].filter(s => items.some(p => p.id === s))
  const bulk = (action: 'publish' | 'unpublish' | 'delete') => run(async () => {
    if (action === 'delete' && !confirm(`Delete ${ids.length} prox${ids.length === 1 ? 'y' : 'ies'}?`)) return
    const r = await api<{ failed: number, results: Array<{ ok: boolean, error?: { message: string } }> }>('POST', '/proxies/bulk', { action, ids })
    setSelected(new Set())
    if (r.failed > 0) throw new Error(r.results.filter(x => !x.ok).map(x => x.error?.message).join(' '))
  })

  return (
    <section>
      <div className='toolbar'>
        <h1><Link to='/collections' className='muted'>Collections</Link> / {c.name}</h1>
        <Status value={c.status} />
        <span className='grow' />
        <button type='button' className='ghost' onClick={() => { void run(() => download(`/collections/${id}/export`, `${c.name}.gatehouse.json`)) }}>Export</button>
        <button type='button' className='ghost' onClick={() => { void run(() => download(`/collections/${id}/openapi`, `${c.name}.openapi.json`)) }}>OpenAPI</button>
        {canEdit && (
          <>
            <button type='button' className='ghost' onClick={() => { void run(() => api('PUT', `/collections/${id}/status`, { status: c.status === 'active' ? 'disabled' : 'active' })) }}>{c.status === 'active' ? 'Disable' : 'Enable'}</button>
            <button type='button' className='ghost' onClick={() => { void run(async () => { const d = await api<Collection>('POST', `/collections/${id}/duplicate`); navigate(`/collections/${d.id}`) }) }}>Duplicate</button>
            <button type='button' className='ghost' onClick={() => setEditCollection(true)}>Edit</button>
            <button type='button' className='danger' onClick={() => { if (confirm(`Delete ${c.name} and its proxies?`)) void run(async () => { await api('DELETE', `/collections/${id}`); navigate('/collections') }) }}>Delete</button>
          </>
        )}
      </div>
      <p className='muted'><code>{c.base_path}</code> → {c.upstream_url ?? `${c.upstream.targets.length} targets`} {c.description !== '' && `· ${c.description}`}</p>
      <ErrorText error={error ?? proxies.error} />
      <UpstreamPanel collection={c} canEdit={canEdit} />
      <div className='toolbar'>
        <h2>Proxies</h2>
        <span className='grow' />
        {canEdit && ids.length > 0 && (
          <span className='bulk' aria-label='Bulk actions'>
            {ids.length} selected
            <button type='button' className='ghost' onClick={() => { void bulk('publish') }}>Publish</button>
            <button type='button' className='ghost' onClick={() => { void bulk('unpublish') }}>Unpublish</button>
            <button type='button' className='danger' onClick={() => { void bulk('delete') }}>Delete</button>
          </span>
        )}
        {canEdit && <button type='button' onClick={() => setEditing('new')}>New proxy</button>}
      </div>
      <table>
        <thead>
          <tr>
            {canEdit && <th><input type='checkbox' aria-label='Select all' checked={items.length > 0 && ids.length === items.length} onChange={e => setSelected(new Set(e.target.checked ? items.map(p => p.id) : []))} /></th>}
            <th>Name</th><th>Methods</th><th>Path</th><th>Status</th><th>Workflow</th><th />
          </tr>
        </thead>
        <tbody>
          {items.map(p => (
            <tr key={p.id}>
              {canEdit && <td><input type='checkbox' aria-label={`Select ${p.name}`} checked={selected.has(p.id)} onChange={e => { const s = new Set(selected); if (e.target.checked) s.add(p.id); else s.delete(p.id); setSelected(s) }} /></td>}
              <td>{canEdit ? <button type='button' className='link' onClick={() => setEditing(p)}>{p.name}</button> : p.name}</td>
              <td>{p.methods.join(', ')}</td>
              <td><code>{c.base_path}{p.path}</code></td>
              <td><Status value={p.status} /></td>
              <td>{workflowLink(p, canEdit)}</td>
              <td className='actions'>
                {canEdit && <button type='button' className='ghost' onClick={() => { void run(() => api('PUT', `/proxies/${p.id}`, { status: p.status === 'published' ? 'draft' : 'published' })) }}>{p.status === 'published' ? 'Unpublish' : 'Publish'}</button>}
                {canEdit && <button type='button' className='ghost' onClick={() => { void run(() => api('POST', `/proxies/${p.id}/duplicate`)) }}>Duplicate</button>}
              </td>
            </tr>
          ))}
          {items.length === 0 && <tr><td colSpan={7} className='muted'>No proxies in this collection yet.</td></tr>}
        </tbody>
      </table>
      {editing !== null && <ProxyForm collection={c} record={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      {editCollection && (
        <CollectionForm record={c} onClose={() => setEditCollection(false)} />
      )}
    </section>
  )
}

/** The way into the workflow builder, named for what it does there (a bare "none" read as no link at all). */
function workflowLink (p: Proxy, canEdit: boolean) {
  const to = `/proxies/${p.id}/workflow`
  if (p.workflow === null) return canEdit ? <Link to={to}>Add workflow</Link> : <span className='muted'>No workflow</span>
  return <Link to={to}>{canEdit ? 'Edit' : 'View'} workflow ({p.workflow_enabled ? 'enabled' : 'disabled'})</Link>
}
