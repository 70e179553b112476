/** Credentials, policies, clients and profiles: their tables and record shapes. */
import type { BaseRecord } from '../../common/types.js'
import { json, records } from './records.js'
import type { Queryable } from './types.js'

export interface CredentialRecord extends BaseRecord { name: string, type: string, config: Record<string, unknown> }
export interface PolicyRecord extends BaseRecord {
  name: string, description: string, status: 'enabled' | 'disabled'
  rate_limit: { requests: number, per_seconds: number } | null
  quota: { requests: number, period: 'day' | 'month' } | null
}
export interface ClientRecord extends BaseRecord { name: string, description: string, status: 'active' | 'suspended' }
export interface ProfileRecord extends BaseRecord {
  client_id: string, name: string, auth_type: 'api_key' | 'jwt' | 'oidc' | 'mtls' | 'none', policy_id: string | null
  collection_ids: string[], allowed_methods: string[] | null, ip_allowlist: string[] | null
  oidc: { issuer: string, jwks_url?: string | null, audience?: string | null } | null
  mtls_fingerprint: string | null
  rotated_at: string | null
}
/** The profile row with its secret columns (never sent to clients as is). */
export interface ProfileRow extends ProfileRecord { api_key_hash: string | null, secret_sealed: string | null }

export const credentials = records<CredentialRecord>({
  table: 'credentials', label: 'Credential', columns: ['name', 'type', 'config'], jsonColumns: new Set(['config']),
  map: r => ({ name: String(r.name), type: String(r.type), config: json(r.config) })
})

export const policies = records<PolicyRecord>({
  table: 'policies', label: 'Policy', columns: ['name', 'description', 'status', 'rate_limit', 'quota'], jsonColumns: new Set(['rate_limit', 'quota']),
  map: r => ({ name: String(r.name), description: String(r.description), status: r.status as PolicyRecord['status'], rate_limit: json(r.rate_limit), quota: json(r.quota) })
})

export const clients = records<ClientRecord>({
  table: 'clients', label: 'Client', columns: ['name', 'description', 'status'], jsonColumns: new Set(),
  map: r => ({ name: String(r.name), description: String(r.description), status: r.status as ClientRecord['status'] })
})

export const profiles = records<ProfileRow>({
  table: 'profiles',
  label: 'Profile',
  columns: ['client_id', 'name', 'auth_type', 'policy_id', 'collection_ids', 'allowed_methods', 'ip_allowlist', 'oidc', 'mtls_fingerprint', 'api_key_hash', 'secret_sealed', 'rotated_at'],
  jsonColumns: new Set(['collection_ids', 'allowed_methods', 'ip_allowlist', 'oidc']),
  map: r => ({
    client_id: String(r.client_id),
    name: String(r.name),
    auth_type: r.auth_type as ProfileRecord['auth_type'],
    policy_id: r.policy_id === null ? null : String(r.policy_id),
    collection_ids: json(r.collection_ids),
    allowed_methods: json(r.allowed_methods),
    ip_allowlist: json(r.ip_allowlist),
    oidc: json(r.oidc),
    mtls_fingerprint: r.mtls_fingerprint === null ? null : String(r.mtls_fingerprint),
    api_key_hash: r.api_key_hash === null ? null : String(r.api_key_hash),
    secret_sealed: r.secret_sealed === null ? null : String(r.secret_sealed),
    rotated_at: r.rotated_at === null || r.rotated_at === undefined ? null : new Date(r.rotated_at as string).toISOString()
  })
})

/** What the API shows of a profile: no hash, no sealed secret. */
export function publicProfile (p: ProfileRow): ProfileRecord & { has_credentials: boolean } {
  const { api_key_hash: _h, secret_sealed: s, ...rest } = p
  return { ...rest, has_credentials: s !== null }
}

/** Up to `limit` profiles that use a policy (id and name, oldest first). */
export async function profilesUsingPolicy (q: Queryable, policyId: string, limit: number): Promise<Array<{ id: string, name: string }>> {
  const { rows } = await q.query<{ id: string, name: string }>('SELECT id, name FROM profiles WHERE policy_id = $1 ORDER BY seq LIMIT $2', [policyId, limit])
  return rows
}

export async function policyExists (q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM policies WHERE id = $1', [id])
  return rows.length > 0
}

/** Which of these collection ids exist. */
export async function existingCollectionIds (q: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM collections WHERE id = ANY($1::text[])', [ids])
  return new Set(rows.map(r => r.id))
}
