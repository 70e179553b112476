/**
 * The gateway's view of clients, profiles and policies: read from the store
 * whenever configuration changes (together with the route table) and held in
 * memory, so authenticating a call needs no database round trip.
 */
import { decryptSecret } from '../credentials/secrets.js'
import { json } from '../store/rows.js'
import type { Queryable } from '../store/types.js'
import { parseCidr, type Cidr } from '../../common/cidr.js'
import type { PolicySnapshot } from './policy-limits.js'
import type { ProfileSnapshot } from './profile-auth.js'

export interface AccessSnapshot {
  profiles: ReadonlyMap<string, ProfileSnapshot>
  policies: ReadonlyMap<string, PolicySnapshot>
}

export const EMPTY_ACCESS: AccessSnapshot = { profiles: new Map(), policies: new Map() }

export async function loadAccessSnapshot (q: Queryable, secretsKey: Buffer): Promise<AccessSnapshot> {
  const profiles = new Map<string, ProfileSnapshot>()
  const { rows } = await q.query<Record<string, unknown>>('SELECT p.*, c.status AS client_status FROM profiles p JOIN clients c ON c.id = p.client_id')
  for (const r of rows) {
    let jwtSecret: string | null = null
    if (r.auth_type === 'jwt' && typeof r.secret_sealed === 'string') {
      try { jwtSecret = decryptSecret(secretsKey, r.secret_sealed, 'profile.jwt_secret', String(r.id)) } catch { jwtSecret = null }
    }
    const cidrs = json<string[] | null>(r.ip_allowlist)
    profiles.set(String(r.id), {
      id: String(r.id),
      version: Number(r.version),
      client_id: String(r.client_id),
      client_status: r.client_status === 'active' ? 'active' : 'suspended',
      auth_type: r.auth_type as ProfileSnapshot['auth_type'],
      api_key_hash: r.api_key_hash === null ? null : String(r.api_key_hash),
      jwt_secret: jwtSecret,
      oidc: json(r.oidc),
      mtls_fingerprint: r.mtls_fingerprint === null ? null : String(r.mtls_fingerprint),
      collection_ids: json<string[]>(r.collection_ids) ?? [],
      allowed_methods: json(r.allowed_methods),
      ip_allowlist: cidrs === null ? null : cidrs.map(parseCidr).filter((c): c is Cidr => c !== null),
      policy_id: r.policy_id === null ? null : String(r.policy_id)
    })
  }
  const policies = new Map<string, PolicySnapshot>()
  for (const r of (await q.query<Record<string, unknown>>('SELECT * FROM policies')).rows) {
    policies.set(String(r.id), { id: String(r.id), status: r.status === 'enabled' ? 'enabled' : 'disabled', rate_limit: json(r.rate_limit), quota: json(r.quota) })
  }
  return { profiles, policies }
}
