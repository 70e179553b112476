/** Create or edit a proxy (Reload banner on a remote update, closes on a remote delete). */
import { useState, type FormEvent } from 'react'
import { api } from '../api'
import { useEditSnapshot } from '../edit-snapshot'
import { Dialog, ErrorText, Field, formValues, parseJsonField } from '../ui'
import type { Collection } from './collections'

export interface Parameter { name: string, location: 'path' | 'query', type: string, required: boolean, default?: unknown, description?: string }

export interface Proxy {
  id: string, collection_id: string, name: string, description: string, methods: string[], path: string, target_path: string
  parameters: Parameter[], request_schema: unknown, response_schema: unknown, streaming: boolean, status: 'draft' | 'published'
  apply_parameter_defaults?: boolean
  workflow_enabled: boolean, workflow: unknown, workflow_id: string, compression: boolean
  cache: { ttl_s: number, vary: string[], shared: boolean } | null, version: number
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']
const json = (v: unknown) => v == null || (Array.isArray(v) && v.length === 0) ? '' : JSON.stringify(v, null, 2)

export function ProxyForm ({ collection, record: live, onClose }: { collection: Collection, record?: Proxy, onClose: () => void }) {
  const { shown: record, banner } = useEditSnapshot('proxy', 'proxy_id', live, `/proxies/${live?.id ?? ''}`, onClose)
  const [error, setError] = useState<unknown>(null)
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const form = e.currentTarget
    const v = formValues(form)
    try {
      const body = {
        collection_id: collection.id,
        name: v.name,
        description: v.description,
        methods: METHODS.filter(m => (form.elements.namedItem(`method-${m}`) as HTMLInputElement).checked),
        path: v.path,
        target_path: v.target_path === '' ? v.path : v.target_path,
        parameters: parseJsonField('Parameters', v.parameters, []),
        request_schema: parseJsonField('Request schema', v.request_schema, null),
        response_schema: parseJsonField('Response schema', v.response_schema, null),
        streaming: v.streaming === 'on',
        apply_parameter_defaults: v.apply_parameter_defaults === 'on',
        compression: v.compression === 'on',
        cache: v.cache_ttl_s === undefined || v.cache_ttl_s === '' ? null : { ttl_s: Number(v.cache_ttl_s), vary: v.cache_vary.split(/[\s,]+/).filter(h => h !== ''), shared: v.cache_shared === 'on' },
        status: v.status
      }
      if (record === undefined) await api('POST', '/proxies', body)
      else await api('PUT', `/proxies/${record.id}`, body)
      onClose()
    } catch (err) { setError(err) }
  }
  return (
    <Dialog title={record === undefined ? 'New proxy' : `Edit ${record.name}`} onClose={onClose} wide>
      {banner}
      <form onSubmit={e => { void submit(e) }} key={record?.version}>
        <div className='cols'>
          <Field label='Name'><input name='name' required defaultValue={record?.name} /></Field>
          <Field label='Status'>
            <select name='status' defaultValue={record?.status ?? 'draft'}><option value='draft'>draft</option><option value='published'>published</option></select>
          </Field>
        </div>
        <Field label='Description' hint='Shown in the developer portal.'><textarea name='description' rows={2} defaultValue={record?.description} /></Field>
        <fieldset className='methods'>
          <legend>Methods</legend>
          {METHODS.map(m => <label key={m} className='check'><input type='checkbox' name={`method-${m}`} defaultChecked={record?.methods.includes(m) ?? m === 'GET'} /> {m}</label>)}
        </fieldset>
        <div className='cols'>
          <Field label={`Path (under ${collection.base_path})`} hint='{param} segments, optional trailing /*'><input name='path' required placeholder='/items/{id}' defaultValue={record?.path} /></Field>
          <Field label='Target path' hint='Sent to the upstream; empty: the same as the path'><input name='target_path' defaultValue={record?.target_path} /></Field>
        </div>
        <Field label='Parameters (JSON)' hint='[{"name": "id", "location": "path", "type": "integer", "required": true, "description": "…"}]'><textarea name='parameters' rows={3} className='code' defaultValue={json(record?.parameters)} /></Field>
        <div className='cols'>
          <Field label='Request schema (JSON Schema)'><textarea name='request_schema' rows={4} className='code' defaultValue={json(record?.request_schema)} /></Field>
          <Field label='Response schema (JSON Schema)'><textarea name='response_schema' rows={4} className='code' defaultValue={json(record?.response_schema)} /></Field>
        </div>
        <label className='check'><input type='checkbox' name='streaming' defaultChecked={record?.streaming ?? false} /> Streaming (no buffering: event streams, long-lived answers)</label>
        <label className='check'><input type='checkbox' name='apply_parameter_defaults' defaultChecked={record?.apply_parameter_defaults ?? false} /> Add parameter defaults to the forwarded query (off: the backend sees the query as sent; defaults still pre-fill the portal)</label>
        <div className='cols'>
          <Field label='Cache answers for (seconds)' hint='GET and HEAD; empty: no cache. The backend&apos;s Cache-Control max-age or s-maxage wins when it sends one.'><input name='cache_ttl_s' type='number' min={1} defaultValue={record?.cache?.ttl_s ?? ''} /></Field>
          <Field label='Cache varies by request headers' hint='Comma-separated, e.g. x-tenant (the backend&apos;s own Vary applies too)'><input name='cache_vary' defaultValue={record?.cache?.vary.join(', ') ?? ''} /></Field>
        </div>
        <label className='check'><input type='checkbox' name='cache_shared' defaultChecked={record?.cache?.shared ?? false} /> Cached answers are shared by all clients (authenticated collections; off: one entry per client)</label>
        <label className='check'><input type='checkbox' name='compression' defaultChecked={record?.compression ?? true} /> Compress answers (gzip, Brotli) for clients that accept it</label>
        <ErrorText error={error} />
        <footer><button type='button' className='ghost' onClick={onClose}>Cancel</button><button type='submit'>{record === undefined ? 'Create' : 'Save'}</button></footer>
      </form>
    </Dialog>
  )
}
