/** Policies, clients and their access profiles, credentials. */
import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from 'react-router'
import { api, get, type Page } from '../api'
import { useCan } from '../session'
import { Banner, ErrorText, Status, parseJsonField } from '../ui'
import { JsonView } from '../../../shared/json-view'
import { ResourceList, type ResourceSpec } from './resource-list'
import type { Collection } from './collections'

interface Policy { id: string, name: string, version: number, description: string, status: string, rate_limit: { requests: number, per_seconds: number } | null, quota: { requests: number, period: string } | null }
interface Client { id: string, name: string, version: number, description: string, status: string }
interface Profile { id: string, name: string, version: number, client_id: string, auth_type: string, policy_id: string | null, collection_ids: string[], has_credentials: boolean }
interface Credential { id: string, name: string, version: number, type: string, config: Record<string, unknown> }

const num = (v: string) => v === '' ? null : Number(v)

const policies: ResourceSpec<Policy> = {
  title: 'Policies', kind: 'policy', idField: 'policy_id', queryKey: ['policies'], path: '/policies', role: 'admin',
  columns: [
    ['Name', p => p.name],
    ['Status', p => <Status value={p.status} />],
    ['Rate limit', p => p.rate_limit === null ? '—' : `${p.rate_limit.requests} / ${p.rate_limit.per_seconds} s`],
    ['Quota', p => p.quota === null ? '—' : `${p.quota.requests} / ${p.quota.period}`]
  ],
  fields: [
    { name: 'name', label: 'Name', required: true, value: p => p?.name ?? '' },
    { name: 'description', label: 'Description', value: p => p?.description ?? '' },
    { name: 'rl_requests', label: 'Rate limit: requests', type: 'number', hint: 'Empty: no rate limit', value: p => String(p?.rate_limit?.requests ?? '') },
    { name: 'rl_per', label: 'Rate limit: per seconds', type: 'number', value: p => String(p?.rate_limit?.per_seconds ?? '') },
    { name: 'q_requests', label: 'Quota: requests', type: 'number', hint: 'Empty: no quota', value: p => String(p?.quota?.requests ?? '') },
    { name: 'q_period', label: 'Quota: period', type: 'select', options: [['day', 'day'], ['month', 'month']], value: p => p?.quota?.period ?? 'day' }
  ],
  toBody: v => ({
    name: v.name,
    description: v.description,
    rate_limit: v.rl_requests === '' ? null : { requests: num(v.rl_requests), per_seconds: num(v.rl_per) ?? 60 },
    quota: v.q_requests === '' ? null : { requests: num(v.q_requests), period: v.q_period }
  }),
  actions: (p, run) => <ToggleButton role='admin' label={p.status === 'enabled' ? 'Disable' : 'Enable'} onClick={() => run(() => api('PUT', `/policies/${p.id}/toggle-status`))} />
}

const clients: ResourceSpec<Client> = {
  title: 'Clients', kind: 'client', idField: 'client_id', queryKey: ['clients'], path: '/clients', role: 'admin',
  columns: [
    ['Name', c => <Link to={`/clients/${c.id}`}>{c.name}</Link>],
    ['Status', c => <Status value={c.status} />],
    ['Id', c => <code>{c.id}</code>]
  ],
  fields: [
    { name: 'name', label: 'Name', required: true, value: c => c?.name ?? '' },
    { name: 'description', label: 'Description', value: c => c?.description ?? '' }
  ],
  toBody: v => ({ name: v.name, description: v.description }),
  actions: (c, run) => <ToggleButton role='admin' label={c.status === 'active' ? 'Suspend' : 'Activate'} onClick={() => run(() => api('PUT', `/clients/${c.id}/status`, { status: c.status === 'active' ? 'suspended' : 'active' }))} />
}

const CREDENTIAL_TYPES: Array<[string, string]> = [['imap', 'IMAP'], ['kafka', 'Kafka'], ['http_basic', 'HTTP basic'], ['http_bearer', 'HTTP bearer']]

const credentials: ResourceSpec<Credential> = {
  title: 'Credentials', kind: 'credential', idField: 'credential_id', queryKey: ['credentials'], path: '/credentials', role: 'admin',
  columns: [['Name', c => c.name], ['Type', c => c.type], ['Id', c => <code>{c.id}</code>]],
  fields: [
    { name: 'name', label: 'Name', required: true, value: c => c?.name ?? '' },
    { name: 'type', label: 'Type', type: 'select', options: CREDENTIAL_TYPES, createOnly: true, value: c => c?.type ?? 'imap' },
    { name: 'config', label: 'Configuration (JSON)', type: 'json', hint: 'Secrets come back as "********"; sending the mask back keeps the stored secret.', value: c => c === undefined ? '{\n  "host": "",\n  "port": 993,\n  "username": "",\n  "password": ""\n}' : JSON.stringify(c.config, null, 2) }
  ],
  toBody: (v, creating) => ({ name: v.name, ...(creating ? { type: v.type } : {}), config: parseJsonField('Configuration', v.config, {}) }),
  check: {
    label: 'Test IMAP login',
    run: async v => {
      const r = await api<{ ok: boolean, mailbox?: string, exists?: number, message?: string }>('POST', '/credentials/validate', { type: v.type ?? 'imap', config: parseJsonField('Configuration', v.config, {}) })
      return r.ok ? `Connected: mailbox ${r.mailbox ?? ''} holds ${r.exists ?? 0} messages.` : r.message ?? 'The check failed.'
    }
  }
}

function ToggleButton ({ role, label, onClick }: { role: 'admin', label: string, onClick: () => void }) {
  return useCan(role) ? <button type='button' className='ghost' onClick={onClick}>{label}</button> : null
}

/** Tests the stored IMAP account live (the server fills the masked secret from the stored one). */
export const PoliciesPage = () => <ResourceList spec={policies} />
export const ClientsPage = () => <ResourceList spec={clients} />
export const CredentialsPage = () => <ResourceList spec={credentials} />

/** One client and its access profiles (credentials shown once to admins; rotate; auth type). */
export function ClientPage () {
  const { id = '' } = useParams()
  const client = useQuery({ queryKey: ['clients', id], queryFn: async () => await get<Client>(`/clients/${id}`) })
  const colls = useQuery({ queryKey: ['collections'], queryFn: async () => await get<Page<Collection>>('/collections?limit=500') })
  const pols = useQuery({ queryKey: ['policies'], queryFn: async () => await get<Page<Policy>>('/policies?limit=500') })
  const isAdmin = useCan('admin')
  const [secret, setSecret] = useState<unknown>(null)
  const base = `/clients/${id}/profiles`
  const secretBanner = secret !== null && (
    <Banner kind='warn'>Copy these credentials now: they are shown once. <JsonView value={secret} label='New credentials' /> <button type='button' className='ghost' onClick={() => setSecret(null)}>Done</button></Banner>
  )
  const profiles: ResourceSpec<Profile> = {
    title: `Profiles of ${client.data?.name ?? id}`, kind: 'profile', idField: 'profile_id', queryKey: ['profiles', id], path: base, role: 'admin',
    columns: [
      ['Name', p => p.name],
      ['Auth', p => p.auth_type],
      ['Policy', p => pols.data?.items.find(x => x.id === p.policy_id)?.name ?? '—'],
      ['Collections', p => p.collection_ids.map(c => colls.data?.items.find(x => x.id === c)?.name ?? c).join(', ')],
      ['Id', p => <code>{p.id}</code>]
    ],
    fields: [
      { name: 'name', label: 'Name', required: true, value: p => p?.name ?? '' },
      { name: 'auth_type', label: 'Authentication', type: 'select', createOnly: true, options: [['api_key', 'API key'], ['jwt', 'JWT (HS256)'], ['oidc', 'OIDC'], ['mtls', 'mutual TLS'], ['none', 'none']], value: p => p?.auth_type ?? 'api_key' },
      { name: 'policy_id', label: 'Policy', type: 'select', options: [['', '— none —'], ...(pols.data?.items ?? []).map(p => [p.id, p.name] as [string, string])], value: p => p?.policy_id ?? '' },
      { name: 'collection_ids', label: 'Collections it may call (JSON list of ids)', type: 'json', hint: (colls.data?.items ?? []).map(c => `${c.name}: ${c.id}`).join(' · '), value: p => JSON.stringify(p?.collection_ids ?? []) }
    ],
    toBody: (v, creating) => ({ name: v.name, ...(creating ? { auth_type: v.auth_type } : {}), policy_id: v.policy_id === '' ? null : v.policy_id, collection_ids: parseJsonField('Collections', v.collection_ids, []) }),
    afterCreate: (created: { credentials?: unknown }) => { if (created.credentials !== undefined) setSecret(created.credentials); return null },
    actions: (p, run) => isAdmin && (
      <>
        <button type='button' className='ghost' onClick={() => run(async () => { const r = await api<{ credentials?: unknown, reason?: string }>('POST', `${base}/${p.id}/rotate`); setSecret(r.credentials ?? r.reason ?? null) })}>Rotate</button>
        <button type='button' className='ghost' onClick={() => run(async () => { setSecret(await api('GET', `${base}/${p.id}/credentials`)) })}>Show credentials</button>
        <select aria-label={`Auth type of ${p.name}`} value={p.auth_type} onChange={e => { const auth = e.target.value; run(async () => { const r = await api<{ credentials?: unknown }>('PUT', `${base}/${p.id}/auth-type`, { auth_type: auth }); if (r.credentials !== undefined) setSecret(r.credentials) }) }}>
          {['api_key', 'jwt', 'oidc', 'mtls', 'none'].map(a => <option key={a} value={a}>{a}</option>)}
        </select>
      </>
    )
  }
  if (client.error != null) return <ErrorText error={client.error} />
  return (
    <>
      <p><Link to='/clients' className='muted'>Clients</Link> / {client.data?.name} {client.data !== undefined && <Status value={client.data.status} />} <code className='muted'>{id}</code></p>
      {secretBanner}
      <ResourceList spec={profiles} />
    </>
  )
}
