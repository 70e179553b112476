/** Collections: the list (refetched on every collection event), create, import, export. */
import { useState, type FormEvent } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link, useNavigate } from 'react-router'
import { api, download, get, type Page } from '../api'
import { useCan } from '../session'
import { Dialog, ErrorText, Field, Status, formValues } from '../ui'
import { useEditSnapshot } from '../edit-snapshot'
import { CorsFields, corsFromForm, type Cors } from './cors-fields'

export interface Upstream {
  targets: Array<{ url: string, weight: number }>
  balancing: 'round_robin' | 'least_connections' | 'consistent_hash'
  hash_on: string
}

export interface Collection {
  /** Present when the upstream has exactly one target. */
  id: string, name: string, description: string, base_path: string, upstream_url?: string, upstream: Upstream
  status: 'active' | 'disabled', auth_required: boolean, headers: unknown[], cors: Cors | null, version: number, updated_at: string
}

export function CollectionsPage () {
  const list = useQuery({ queryKey: ['collections'], queryFn: async () => await get<Page<Collection>>('/collections?limit=500') })
  const canEdit = useCan('editor')
  const [dialog, setDialog] = useState<'create' | 'import' | null>(null)
  const [error, setError] = useState<unknown>(null)
  return (
    <section>
      <div className='toolbar'>
        <h1>Collections</h1>
        <span className='grow' />
        <button type='button' className='ghost' onClick={() => { download('/collections/export', 'collections.gatehouse.json').catch(setError) }}>Export all</button>
        {canEdit && <button type='button' className='ghost' onClick={() => setDialog('import')}>Import</button>}
        {canEdit && <button type='button' onClick={() => setDialog('create')}>New collection</button>}
      </div>
      <ErrorText error={error ?? list.error} />
      <table>
        <thead><tr><th>Name</th><th>Base path</th><th>Upstream</th><th>Status</th><th>Auth</th></tr></thead>
        <tbody>
          {list.data?.items.map(c => (
            <tr key={c.id}>
              <td><Link to={`/collections/${c.id}`}>{c.name}</Link></td>
              <td><code>{c.base_path}</code></td>
              <td className='muted'>{c.upstream_url ?? `${c.upstream.targets.length} targets`}</td>
              <td><Status value={c.status} /></td>
              <td>{c.auth_required ? 'required' : 'open'}</td>
            </tr>
          ))}
          {list.data?.items.length === 0 && <tr><td colSpan={5} className='muted'>No collections yet.</td></tr>}
        </tbody>
      </table>
      {dialog === 'create' && <CollectionForm onClose={() => setDialog(null)} />}
      {dialog === 'import' && <ImportDialog onClose={() => setDialog(null)} />}
    </section>
  )
}

/** Create (no `record`) or edit a collection. */
export function CollectionForm ({ record: live, onClose }: { record?: Collection, onClose: () => void }) {
  const navigate = useNavigate()
  const { shown: record, banner } = useEditSnapshot('collection', 'collection_id', live, `/collections/${live?.id ?? ''}`, onClose)
  const [error, setError] = useState<unknown>(null)
  const single = record === undefined || record.upstream_url !== undefined
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const v = formValues(e.currentTarget)
    // Several targets are edited on the collection page (Targets); the form keeps them as they are.
    const body = { name: v.name, description: v.description, base_path: v.base_path, ...(single ? { upstream_url: v.upstream_url } : {}), auth_required: v.auth_required === 'on', cors: corsFromForm(v) }
    try {
      if (record === undefined) {
        const created = await api<Collection>('POST', '/collections', body)
        navigate(`/collections/${created.id}`)
      } else await api('PUT', `/collections/${record.id}`, body)
      onClose()
    } catch (err) { setError(err) }
  }
  return (
    <Dialog title={record === undefined ? 'New collection' : `Edit ${record.name}`} onClose={onClose} wide>
      {banner}
      <form onSubmit={e => { void submit(e) }} key={record?.version}>
        <Field label='Name'><input name='name' required defaultValue={record?.name} /></Field>
        <Field label='Description'><input name='description' defaultValue={record?.description} /></Field>
        <Field label='Base path' hint='Starts with /, unique: the gateway serves the proxies under it.'><input name='base_path' required placeholder='/billing' defaultValue={record?.base_path} /></Field>
        {single
          ? <Field label='Upstream URL' hint='One backend; several targets are set on the collection page.'><input name='upstream_url' required placeholder='http://127.0.0.1:9000' defaultValue={record?.upstream_url} /></Field>
          : <p className='muted'>{record.upstream.targets.length} targets: edit them under Targets on the collection page.</p>}
        <label className='check'><input type='checkbox' name='auth_required' defaultChecked={record?.auth_required ?? true} /> Callers must authenticate (client, profile, token)</label>
        <CorsFields value={record?.cors} />
        <ErrorText error={error} />
        <footer><button type='button' className='ghost' onClick={onClose}>Cancel</button><button type='submit'>{record === undefined ? 'Create' : 'Save'}</button></footer>
      </form>
    </Dialog>
  )
}

/** A collection file (from Export) or an OpenAPI document, told apart by its content. */
function ImportDialog ({ onClose }: { onClose: () => void }) {
  const navigate = useNavigate()
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0]
    const v = formValues(form)
    try {
      if (file === undefined) throw new Error('Choose a file to import.')
      let doc: Record<string, unknown>
      try { doc = JSON.parse(await file.text()) } catch { throw new Error('The file is not JSON: export a collection file, or an OpenAPI document as JSON.') }
      if ('openapi' in doc || 'swagger' in doc) {
        const extra = Object.fromEntries(Object.entries({ name: v.name, base_path: v.base_path, upstream_url: v.upstream_url }).filter(([, x]) => x !== ''))
        const created = await api<Collection>('POST', '/collections/import/openapi', { document: doc, ...extra })
        navigate(`/collections/${created.id}`)
      } else {
        const fd = new FormData()
        fd.append('file', file)
        const res = await api<{ items: Collection[] }>('POST', '/collections/import', fd)
        if (res.items.length === 1) navigate(`/collections/${res.items[0].id}`)
      }
      onClose()
    } catch (err) { setError(err) }
  }
  return (
    <Dialog title='Import' onClose={onClose}>
      <form onSubmit={e => { void submit(e) }}>
        <Field label='File' hint='A Gatehouse collection file, or an OpenAPI 3 document (JSON). Imported proxies arrive as drafts.'><input type='file' name='file' accept='.json,application/json' /></Field>
        <p className='muted'>For an OpenAPI document, optionally:</p>
        <Field label='Name'><input name='name' /></Field>
        <Field label='Base path'><input name='base_path' placeholder='/petstore' /></Field>
        <Field label='Upstream URL'><input name='upstream_url' /></Field>
        <ErrorText error={error} />
        <footer><button type='button' className='ghost' onClick={onClose}>Cancel</button><button type='submit'>Import</button></footer>
      </form>
    </Dialog>
  )
}
