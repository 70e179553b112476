/**
 * The whole gateway as one configuration file (`format_version: 1`): collections with their
 * proxies, policies, clients with their profiles, and credentials. Keyed by names, never ids;
 * no timestamps, no versions, no secrets:
 *   - a profile names its policy and the base paths of its collections; key material is never in it;
 *   - a credential's secret fields are `${ENV}` references (credentialEnvName), filled in by
 *     whoever applies the file from its own environment.
 * Everything is sorted by its key, so two dumps of the same state are byte-for-byte identical.
 */
import type { Collection, Page } from '../../common/types.js'
import { exportCollections, type ExportedCollection, type ExportedProxy } from '../collections-io/export-file.js'
import { SECRET_FIELDS, SECRET_MASK, type CredentialType } from '../credentials/types.js'
import { getPath, maskConfig, setPath } from '../credentials/secret-fields.js'
import { clients, credentials, policies, profiles, type ProfileRecord } from '../store/access.js'
import { listCollections } from '../store/collections.js'
import { listProxiesOf } from '../store/proxies.js'
import type { PageQuery } from '../store/rows.js'
import type { Queryable } from '../store/types.js'

export const CONFIG_FORMAT_VERSION = 1

export type ConfigProxy = ExportedProxy
export type ConfigCollection = ExportedCollection & { proxies: ConfigProxy[] }
export interface ConfigPolicy { name: string, description: string, status: 'enabled' | 'disabled', rate_limit: { requests: number, per_seconds: number } | null, quota: { requests: number, period: 'day' | 'month' } | null }
export interface ConfigProfile {
  name: string
  auth_type: ProfileRecord['auth_type']
  /** The policy's name, or null. */
  policy: string | null
  /** Base paths of the collections the profile may call. */
  collections: string[]
  allowed_methods: string[] | null
  ip_allowlist: string[] | null
  oidc: ProfileRecord['oidc']
  mtls_fingerprint: string | null
}
export interface ConfigClient { name: string, description: string, status: 'active' | 'suspended', profiles: ConfigProfile[] }
export interface ConfigCredential { name: string, type: string, config: Record<string, unknown> }

export interface ConfigFile {
  format_version: typeof CONFIG_FORMAT_VERSION
  collections: ConfigCollection[]
  policies: ConfigPolicy[]
  clients: ConfigClient[]
  credentials: ConfigCredential[]
}

/**
 * The environment variable a dump names for one secret field of one credential:
 * `GATEHOUSE_CREDENTIAL_<NAME>_<FIELD>`, upper case, every run of other characters as `_`
 * (credential "billing mail", field `sasl.password` -> GATEHOUSE_CREDENTIAL_BILLING_MAIL_SASL_PASSWORD).
 */
export function credentialEnvName (credential: string, field: string): string {
  const part = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')
  return `GATEHOUSE_CREDENTIAL_${part(credential)}_${part(field)}`
}

/** Every item of a paged listing. */
async function all<T> (list: (pq: PageQuery) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = []
  let cursor: string | undefined
  do {
    const p = await list({ limit: 500, ...(cursor === undefined ? {} : { cursor }) })
    out.push(...p.items)
    cursor = p.next_cursor ?? undefined
  } while (cursor !== undefined)
  return out
}

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => { const x = key(a); const y = key(b); return x < y ? -1 : x > y ? 1 : 0 }
export const proxyKey = (p: { methods: string[], path: string }) => `${[...p.methods].sort().join(',')} ${p.path}`

/** The configuration file of what `q` holds now. */
export async function dumpConfig (q: Queryable): Promise<ConfigFile> {
  const cols = (await all<Collection>(pq => listCollections(q, pq))).sort(byKey(c => c.base_path))
  const items = []
  for (const collection of cols) items.push({ collection, proxies: await listProxiesOf(q, collection.id) })
  const exported = exportCollections(items).collections
  const basePathOf = new Map(cols.map(c => [c.id, c.base_path]))

  const pols = await all(pq => policies.list(q, pq))
  const policyName = new Map(pols.map(p => [p.id, p.name]))
  const cls = await all(pq => clients.list(q, pq))
  const profs = await all(pq => profiles.list(q, pq))
  const creds = await all(pq => credentials.list(q, pq))

  return {
    format_version: CONFIG_FORMAT_VERSION,
    collections: exported.map(({ collection, proxies }) => ({ ...collection, proxies: [...proxies].sort(byKey(proxyKey)) })),
    policies: pols.map(p => ({ name: p.name, description: p.description, status: p.status, rate_limit: p.rate_limit, quota: p.quota })).sort(byKey(p => p.name)),
    clients: cls.map(c => ({
      name: c.name,
      description: c.description,
      status: c.status,
      profiles: profs.filter(p => p.client_id === c.id).map(p => ({
        name: p.name,
        auth_type: p.auth_type,
        policy: p.policy_id === null ? null : policyName.get(p.policy_id) ?? null,
        collections: p.collection_ids.map(id => basePathOf.get(id)).filter((b): b is string => b !== undefined).sort(),
        allowed_methods: p.allowed_methods,
        ip_allowlist: p.ip_allowlist,
        oidc: p.oidc,
        mtls_fingerprint: p.mtls_fingerprint
      })).sort(byKey(p => p.name))
    })).sort(byKey(c => c.name)),
    credentials: creds.map(c => ({ name: c.name, type: c.type, config: withEnvReferences(c.name, c.type as CredentialType, c.config) })).sort(byKey(c => c.name))
  }
}

/** The config with each secret field that holds a value as its `${ENV}` reference (never the value). */
function withEnvReferences (name: string, type: CredentialType, config: unknown): Record<string, unknown> {
  const out = maskConfig(type, config)
  for (const field of SECRET_FIELDS[type] ?? []) {
    if (getPath(out, field) === SECRET_MASK) setPath(out, field, `\${${credentialEnvName(name, field)}}`)
  }
  return out
}
