/**
 * A list page for a simple resource (policies, clients, credentials, profiles): a
 * table refetched silently on events of its kind, a create/edit dialog built from a
 * field list (Reload banner on a remote update, closed on a remote delete), delete.
 */
import { useState, type FormEvent, type ReactNode } from 'react'
import { useQuery } from '@tanstack/react-query'
import { api, get, type Page } from '../api'
import type { Role } from '../auth'
import type { ChangeEvent } from '../events'
import { useEditSnapshot } from '../edit-snapshot'
import { useCan } from '../session'
import { Banner, Dialog, ErrorText, Field, formValues } from '../ui'

export interface FieldSpec<T> {
  name: string
  label: string
  type?: 'text' | 'number' | 'select' | 'json'
  options?: Array<[string, string]>
  hint?: string
  required?: boolean
  /** Only when creating (changed through another route afterwards). */
  createOnly?: boolean
  value: (r: T | undefined) => string
}

export interface ResourceSpec<T extends { id: string, name: string, version: number }> {
  title: string
  kind: string
  idField: keyof ChangeEvent
  queryKey: unknown[]
  path: string
  role: Role
  columns: Array<[string, (r: T) => ReactNode]>
  fields: Array<FieldSpec<T>>
  toBody: (v: Record<string, string>, creating: boolean) => unknown
  /** Extra buttons per row (status toggles, rotate, validate…). */
  actions?: (r: T, run: (fn: () => Promise<unknown>) => void) => ReactNode
  /** Shown once after a create (a new profile's credentials). */
  afterCreate?: (created: any) => ReactNode
  toolbar?: ReactNode
  /** A check of the values in the form, without saving (an IMAP login test): answers a sentence. */
  check?: { label: string, run: (v: Record<string, string>) => Promise<string> }
}

export function ResourceList<T extends { id: string, name: string, version: number }> ({ spec }: { spec: ResourceSpec<T> }) {
  const list = useQuery({ queryKey: spec.queryKey, queryFn: async () => await get<Page<T>>(`${spec.path}?limit=500`) })
  const canEdit = useCan(spec.role)
  const [editing, setEditing] = useState<T | 'new' | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [shownOnce, setShownOnce] = useState<ReactNode>(null)
  const run = (fn: () => Promise<unknown>) => { setError(null); fn().catch(setError) }
  return (
    <section>
      <div className='toolbar'>
        <h1>{spec.title}</h1>
        <span className='grow' />
        {spec.toolbar}
        {canEdit && <button type='button' onClick={() => setEditing('new')}>New</button>}
      </div>
      <ErrorText error={error ?? list.error} />
      {shownOnce}
      <table>
        <thead><tr>{spec.columns.map(([h]) => <th key={h}>{h}</th>)}<th /></tr></thead>
        <tbody>
          {list.data?.items.map(r => (
            <tr key={r.id}>
              {spec.columns.map(([h, cell]) => <td key={h}>{cell(r)}</td>)}
              <td className='actions'>
                {spec.actions?.(r, run)}
                {canEdit && <button type='button' className='ghost' onClick={() => setEditing(r)}>Edit</button>}
                {canEdit && <button type='button' className='danger' onClick={() => { if (confirm(`Delete ${r.name}?`)) run(() => api('DELETE', `${spec.path}/${r.id}`)) }}>Delete</button>}
              </td>
            </tr>
          ))}
          {list.data?.items.length === 0 && <tr><td colSpan={spec.columns.length + 1} className='muted'>None yet.</td></tr>}
        </tbody>
      </table>
      {editing !== null && (
        <ResourceForm spec={spec} record={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)}
          onCreated={c => { if (spec.afterCreate !== undefined) setShownOnce(spec.afterCreate(c)) }} />
      )}
    </section>
  )
}

function ResourceForm<T extends { id: string, name: string, version: number }> ({ spec, record: live, onClose, onCreated }: { spec: ResourceSpec<T>, record?: T, onClose: () => void, onCreated: (c: unknown) => void }) {
  const { shown: record, banner } = useEditSnapshot(spec.kind, spec.idField, live, `${spec.path}/${live?.id ?? ''}`, onClose)
  const [error, setError] = useState<unknown>(null)
  const [checked, setChecked] = useState<string | null>(null)
  const creating = record === undefined
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    try {
      const body = spec.toBody(formValues(e.currentTarget), creating)
      if (creating) onCreated(await api('POST', spec.path, body))
      else await api('PUT', `${spec.path}/${record.id}`, body)
      onClose()
    } catch (err) { setError(err) }
  }
  return (
    <Dialog title={creating ? `New ${spec.kind}` : `Edit ${record.name}`} onClose={onClose}>
      {banner}
      <form onSubmit={e => { void submit(e) }} key={record?.version}>
        {spec.fields.filter(f => creating || f.createOnly !== true).map(f => (
          <Field key={f.name} label={f.label} hint={f.hint}>
            {f.type === 'select'
              ? <select name={f.name} defaultValue={f.value(record)}>{f.options?.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select>
              : f.type === 'json'
                ? <textarea name={f.name} rows={6} className='code' defaultValue={f.value(record)} />
                : <input name={f.name} type={f.type === 'number' ? 'number' : 'text'} required={f.required} defaultValue={f.value(record)} />}
          </Field>
        ))}
        <ErrorText error={error} />
        {checked !== null && <Banner>{checked}</Banner>}
        <footer>
          {spec.check !== undefined && <button type='button' className='ghost' onClick={e => { setChecked('Checking…'); spec.check!.run(formValues(e.currentTarget.form!)).then(setChecked, err => { setChecked(null); setError(err) }) }}>{spec.check.label}</button>}
          <button type='button' className='ghost' onClick={onClose}>Cancel</button><button type='submit'>{creating ? 'Create' : 'Save'}</button>
        </footer>
      </form>
    </Dialog>
  )
}
