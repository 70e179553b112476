/**
 * The sample request the builder's Run sends through the workflow: method, path parameters,
 * query, headers and body, pre-filled from the proxy (its path's `{name}` segments and its
 * parameters' defaults) and kept per proxy in this browser (localStorage) once edited or run,
 * so `{{trigger.params.city}}` has a value and the next visit starts from the last request.
 */
import { useEffect, useState } from 'react'
import { Field } from '../ui'
import type { Proxy } from './proxy-form'

export interface SampleRequest {
  method: string
  path_params: Record<string, string>
  /** One `name=value` per line. */
  query: string
  /** One `Name: value` per line. */
  headers: string
  /** JSON, or any text; empty: no body. */
  body: string
}

const key = (proxyId: string) => `gatehouse.console.sample-request.${proxyId}`
const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map(m => m[1]!)
const text = (v: unknown) => v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v)

/** What the proxy itself suggests: its first method, its path parameters and the parameters' defaults. */
export function defaultSample (proxy: Proxy): SampleRequest {
  const params = proxy.parameters ?? []
  const defaultOf = (name: string, location: string) => text(params.find(p => p.name === name && p.location === location)?.default)
  const withDefault = (location: string) => params.filter(p => (p.location as string) === location && p.default !== undefined)
  return {
    method: proxy.methods[0] ?? 'GET',
    path_params: Object.fromEntries(pathParams(proxy.path).map(n => [n, defaultOf(n, 'path')])),
    query: withDefault('query').map(p => `${p.name}=${text(p.default)}`).join('\n'),
    headers: withDefault('header').map(p => `${p.name}: ${text(p.default)}`).join('\n'),
    body: ''
  }
}

function stored (proxy: Proxy): SampleRequest | null {
  try {
    const s = JSON.parse(localStorage.getItem(key(proxy.id)) ?? 'null') as SampleRequest | null
    if (s === null) return null
    // Path parameters follow the proxy's path as it is now; values typed before are kept.
    return { ...s, path_params: Object.fromEntries(pathParams(proxy.path).map(n => [n, s.path_params?.[n] ?? ''])) }
  } catch { return null }
}

/** The proxy's sample request and its setter (which keeps it); `keep` stores the current one (on Run). */
export function useSampleRequest (proxy: Proxy | undefined): { sample: SampleRequest | null, setSample: (s: SampleRequest) => void, keep: () => void } {
  const [sample, set] = useState<SampleRequest | null>(null)
  useEffect(() => { if (proxy !== undefined) set(stored(proxy) ?? defaultSample(proxy)) }, [proxy?.id, proxy?.path])
  const save = (s: SampleRequest) => { if (proxy !== undefined) localStorage.setItem(key(proxy.id), JSON.stringify(s)) }
  return { sample, setSample: s => { set(s); save(s) }, keep: () => { if (sample !== null) save(sample) } }
}

/** The http_trigger output the sample stands for (what a request to the gateway would give). */
export function triggerInput (proxy: Proxy | undefined, s: SampleRequest | null): { request: Record<string, unknown> } {
  const sample = s ?? (proxy !== undefined ? defaultSample(proxy) : { method: 'GET', path_params: {}, query: '', headers: '', body: '' })
  const path = (proxy?.path ?? '/').replace(/\{([^}]+)\}/g, (_, n: string) => encodeURIComponent(sample.path_params[n] ?? ''))
  const pairs = (lines: string, sep: string) => lines.split('\n').map(l => l.trim()).filter(l => l !== '' && l.includes(sep))
    .map(l => [l.slice(0, l.indexOf(sep)).trim(), l.slice(l.indexOf(sep) + 1).trim()] as const)
  let body: unknown = null
  if (sample.body.trim() !== '') {
    try { body = JSON.parse(sample.body) } catch { body = sample.body }
  }
  return {
    request: {
      method: sample.method,
      path,
      path_params: { ...sample.path_params },
      query: Object.fromEntries(pairs(sample.query, '=')),
      headers: Object.fromEntries(pairs(sample.headers, ':').map(([k, v]) => [k.toLowerCase(), v])),
      body
    }
  }
}

export function SampleRequestForm ({ proxy, sample, onChange, readOnly }: { proxy: Proxy, sample: SampleRequest, onChange: (s: SampleRequest) => void, readOnly: boolean }) {
  const set = (patch: Partial<SampleRequest>) => onChange({ ...sample, ...patch })
  return (
    <fieldset className='settings sample-request' aria-label='Sample request'>
      <legend>Sample request (what Run sends)</legend>
      <Field label='Method'>
        <select aria-label='Method' value={sample.method} disabled={readOnly} onChange={e => set({ method: e.target.value })}>
          {proxy.methods.map(m => <option key={m}>{m}</option>)}
        </select>
      </Field>
      {Object.keys(sample.path_params).map(name => (
        <Field key={name} label={`Path parameter ${name}`}>
          <input aria-label={`Path parameter ${name}`} value={sample.path_params[name] ?? ''} disabled={readOnly} onChange={e => set({ path_params: { ...sample.path_params, [name]: e.target.value } })} />
        </Field>
      ))}
      <Field label='Query' hint='one name=value per line'>
        <textarea aria-label='Query' rows={2} className='code' value={sample.query} disabled={readOnly} onChange={e => set({ query: e.target.value })} />
      </Field>
      <Field label='Headers' hint='one Name: value per line'>
        <textarea aria-label='Headers' rows={2} className='code' value={sample.headers} disabled={readOnly} onChange={e => set({ headers: e.target.value })} />
      </Field>
      <Field label='Body' hint='JSON, or text; empty for none'>
        <textarea aria-label='Body' rows={3} className='code' value={sample.body} disabled={readOnly} onChange={e => set({ body: e.target.value })} />
      </Field>
    </fieldset>
  )
}
