/**
 * Making the gateway match a configuration file, in ONE transaction (POST /api/v1/config/apply,
 * the MCP tool apply_config, CONFIG_FILE):
 *
 *   check the file alone (apply-check.ts) ─ every problem, with paths into the file
 *   tx: lock the configuration version ─ If-Match compares it
 *       read the gateway as a file (dump.ts; credential configs opened, to compare secrets)
 *       check what the file names against the gateway (policies, base paths, routes kept)
 *       diff (diff.ts) ─ nothing to change, or a dry run: stop here, nothing written
 *       write each change with the repositories' own functions, audit rows in the same tx
 *       fold the version bumps into one version (store/config-apply.ts)
 *   the caller publishes the events and reloads once, after the commit.
 *
 * Any problem throws before the commit: a file with one bad resource changes nothing.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { preconditionFailed, type ErrorDetail } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import { mergeUpstream } from '../../common/upstream-settings.js'
import { hashApiKey } from '../access/profile-auth.js'
import { validateCredentialInput } from '../credentials/schemas.js'
import { mergeForUpdate, openConfig, sealConfig } from '../credentials/secret-fields.js'
import { encryptSecret } from '../credentials/secrets.js'
import type { CredentialType } from '../credentials/types.js'
import type { EventInput } from '../events/types.js'
import { clients, credentials, policies, profiles, type ClientRecord, type CredentialRecord, type PolicyRecord, type ProfileRow } from '../store/access.js'
import { insertAuditEntries, type AuditEntryInput, type AuditSource } from '../store/audit.js'
import { insertCollection, setCollectionFields, toCollection } from '../store/collections.js'
import { collapseConfigVersions, deleteCollectionRow, deleteProxyRow, lockConfigVersion } from '../store/config-apply.js'
import { insertProxyRow, patchProxy, toProxy } from '../store/proxies.js'
import { routeKey } from '../store/route-key.js'
import type { Queryable, Store } from '../store/types.js'
import { checkConfigFile, invalidFile, normaliseConfig } from './apply-check.js'
import { diffConfig, type ConfigChange } from './diff.js'
import { dumpConfig, proxyKey, type ConfigCollection, type ConfigFile, type ConfigProfile, type ConfigProxy } from './dump.js'

export const APPLY_PATH = '/api/v1/config/apply'

export interface ApplyOptions {
  dryRun: boolean
  prune: boolean
  /** The configuration version the caller read (If-Match); another one answers 412. */
  ifVersion?: number
  actor: { sub: string | null, source: AuditSource, remoteAddr: string | null }
  secretsKey: () => Promise<Buffer>
}

export interface ApplyResult {
  changes: ConfigChange[]
  /** True when this call changed the gateway (false for a dry run and for a file it already matches). */
  applied: boolean
  /** The configuration version after the call. */
  version: number
  /** What to publish once the transaction has committed, one per changed resource. */
  events: EventInput[]
}

/** The gateway's records, by the keys the file uses. */
interface State {
  file: ConfigFile
  collections: Map<string, Collection>
  proxies: Map<string, Proxy>
  policies: Map<string, PolicyRecord[]>
  clients: Map<string, ClientRecord[]>
  profiles: Map<string, ProfileRow[]>
  credentials: Map<string, CredentialRecord[]>
  /** Credential configs with their secrets opened, by id. */
  opened: Map<string, Record<string, unknown>>
}

const group = <T>(items: T[], key: (t: T) => string): Map<string, T[]> => {
  const out = new Map<string, T[]>()
  for (const x of items) { const k = key(x); const l = out.get(k); if (l === undefined) out.set(k, [x]); else l.push(x) }
  return out
}

async function loadState (q: Queryable, key: Buffer): Promise<State> {
  const rows = async (table: string) => (await q.query(`SELECT * FROM ${table} ORDER BY seq`)).rows
  const cols = (await rows('collections')).map(toCollection)
  const basePath = new Map(cols.map(c => [c.id, c.base_path]))
  const clientRows = (await rows('clients')).map(clients.toRecord)
  const clientName = new Map(clientRows.map(c => [c.id, c.name]))
  const creds = (await rows('credentials')).map(credentials.toRecord)
  const opened = new Map(creds.map(c => [c.id, openConfig(key, c.type as CredentialType, c.config, c.id)]))
  const file = await dumpConfig(q)
  // Secrets compared as values: the dump's ${ENV} references say nothing about them.
  const firstByName = new Map([...creds].reverse().map(c => [c.name, c]))
  file.credentials = file.credentials.map(c => ({ ...c, config: opened.get(firstByName.get(c.name)!.id)! }))
  return {
    file,
    collections: new Map(cols.map(c => [c.base_path, c])),
    proxies: new Map((await rows('proxies')).map(toProxy).map(p => [`${basePath.get(p.collection_id) ?? ''} ${proxyKey(p)}`, p])),
    policies: group((await rows('policies')).map(policies.toRecord), p => p.name),
    clients: group(clientRows, c => c.name),
    profiles: group((await rows('profiles')).map(profiles.toRecord), p => `${clientName.get(p.client_id) ?? ''}/${p.name}`),
    credentials: group(creds, c => c.name),
    opened
  }
}

/** What the file names that the gateway must have, and the credential configs as they will be stored. */
function stateProblems (wanted: ConfigFile, state: State, prune: boolean): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const add = (field: string, message: string) => details.push({ field, message })
  const kept = prune ? '' : ' nor the gateway'
  const policyNames = new Set([...wanted.policies.map(p => p.name), ...prune ? [] : state.policies.keys()])
  const basePaths = new Set([...wanted.collections.map(c => c.base_path), ...prune ? [] : state.collections.keys()])
  wanted.clients.forEach((c, ci) => {
    c.profiles.forEach((p, pi) => {
      const at = `clients[${ci}].profiles[${pi}]`
      if (p.policy !== null && !policyNames.has(p.policy)) add(`${at}.policy`, `names the policy '${p.policy}', which neither the file${kept} has`)
      for (const b of p.collections) if (!basePaths.has(b)) add(`${at}.collections`, `names the base path '${b}', which neither the file${kept} has`)
      if ((state.profiles.get(`${c.name}/${p.name}`)?.length ?? 0) > 1) add(`${at}.name`, `is the name of several profiles of client '${c.name}' in the gateway; rename them apart first`)
    })
  })
  const ambiguous = (list: Array<{ name: string }>, stored: Map<string, unknown[]>, at: string, what: string) => list.forEach((x, i) => {
    if ((stored.get(x.name)?.length ?? 0) > 1) add(`${at}[${i}].name`, `is the name of several ${what} in the gateway; rename them apart first`)
  })
  ambiguous(wanted.policies, state.policies, 'policies', 'policies')
  ambiguous(wanted.clients, state.clients, 'clients', 'clients')
  ambiguous(wanted.credentials, state.credentials, 'credentials', 'credentials')
  // Without prune, the gateway's proxies that the file does not name stay, with their routes.
  if (!prune) {
    wanted.collections.forEach((c, ci) => {
      const stored = state.collections.get(c.base_path)
      if (stored === undefined) return
      const named = new Set(c.proxies.map(p => `${c.base_path} ${proxyKey(p)}`))
      const others = [...state.proxies.entries()].filter(([k, p]) => p.collection_id === stored.id && !named.has(k)).map(([, p]) => p)
      c.proxies.forEach((p, pi) => {
        const taken = others.find(o => routeKey(o.path) === routeKey(p.path) && o.methods.some(m => p.methods.includes(m)))
        if (taken !== undefined) add(`collections[${ci}].proxies[${pi}].path`, `answers the same requests as the gateway's proxy '${taken.name}' (${taken.methods.join(',')} ${taken.path}), which the file does not name; apply with prune to remove it`)
      })
    })
  }
  wanted.credentials.forEach((c, i) => {
    const stored = state.credentials.get(c.name)?.[0]
    // A secret sent as the mask keeps the stored one, as on PUT /api/v1/credentials/:id.
    const config = stored !== undefined && stored.type === c.type ? mergeForUpdate(c.type as CredentialType, state.opened.get(stored.id), c.config) : structuredClone(c.config)
    for (const d of validateCredentialInput(c.type, config)) add(`credentials[${i}].${d.field ?? 'config'}`, d.message)
    c.config = config
  })
  return details
}

const proxyFields = (p: ConfigProxy) => ({
  name: p.name,
  description: p.description,
  methods: p.methods,
  path: p.path,
  target_path: p.target_path,
  headers: p.headers,
  parameters: p.parameters,
  request_schema: p.request_schema,
  response_schema: p.response_schema,
  streaming: p.streaming,
  status: p.status,
  workflow_enabled: p.workflow_enabled,
  workflow: p.workflow,
  timeout_ms: p.timeout_ms,
  max_body_bytes: p.max_body_bytes,
  cache: p.cache ?? null,
  compression: p.compression ?? true,
  websocket: p.websocket ?? false,
  apply_parameter_defaults: p.apply_parameter_defaults ?? false
})

const collectionFields = ({ proxies: _p, upstream_url: url, upstream, ...c }: ConfigCollection) => ({ ...c, upstream: mergeUpstream(null, upstream, url) })

const policyFields = (p: ConfigFile['policies'][number]) => ({ name: p.name, description: p.description, status: p.status, rate_limit: p.rate_limit, quota: p.quota })

/** New key material for a profile type that has some (as the profile routes issue it); read it with GET …/credentials. */
function material (key: Buffer, authType: string, record: string): { api_key_hash: string | null, secret_sealed: string | null } {
  if (authType === 'api_key') {
    const token = `gh_${randomBytes(32).toString('base64url')}`
    return { api_key_hash: hashApiKey(token), secret_sealed: encryptSecret(key, token, 'profile.api_key', record) }
  }
  if (authType === 'jwt') return { api_key_hash: null, secret_sealed: encryptSecret(key, randomBytes(32).toString('base64url'), 'profile.jwt_secret', record) }
  return { api_key_hash: null, secret_sealed: null }
}

/** Checks the file, then makes the gateway match it (or, for a dry run, says what that would change). */
export async function applyConfig (store: Store, data: unknown, opts: ApplyOptions): Promise<ApplyResult> {
  const checked = checkConfigFile(data)
  // A file without the schema's shape cannot be compared with the gateway: its problems are all there is.
  if (!checked.valid) throw invalidFile(checked.details)
  const wanted = normaliseConfig(checked.file)
  const key = await opts.secretsKey()
  return await store.tx(async q => {
    const from = await lockConfigVersion(q)
    if (opts.ifVersion !== undefined && opts.ifVersion !== from) {
      throw preconditionFailed(`The configuration is at version ${from}, not ${opts.ifVersion}: it changed since you read it. Read it again and retry.`)
    }
    const state = await loadState(q, key)
    const problems = [...checked.details]
    const seen = new Set(problems.map(d => d.field))
    for (const d of stateProblems(wanted, state, opts.prune)) if (!seen.has(d.field)) problems.push(d)
    if (problems.length > 0) throw invalidFile(problems)
    const changes = diffConfig(state.file, wanted, { prune: opts.prune })
    if (opts.dryRun || changes.length === 0) return { changes, applied: false, version: from, events: [] }
    const { events, audit } = await write(q, key, wanted, state, changes, opts)
    await insertAuditEntries(q, audit)
    const version = await collapseConfigVersions(q, from, `config-apply:${randomUUID()}`)
    return { changes, applied: true, version, events }
  })
}

async function write (q: Queryable, key: Buffer, wanted: ConfigFile, state: State, changes: ConfigChange[], opts: ApplyOptions) {
  const actions = new Map(changes.map(c => [`${c.kind}\u0000${c.key}`, c.action]))
  const act = (kind: ConfigChange['kind'], k: string) => actions.get(`${kind}\u0000${k}`)
  const events: EventInput[] = []
  const audit: AuditEntryInput[] = []
  const sub = opts.actor.sub ?? undefined
  const done = (kind: string, id: string, action: 'create' | 'update' | 'delete', event: EventInput) => {
    events.push(event)
    audit.push({ actor_sub: opts.actor.sub, source: opts.actor.source, action, resource_kind: kind, resource_id: id, method: 'POST', path: APPLY_PATH, status: 200, remote_addr: opts.actor.remoteAddr })
  }
  const op = { create: 'created', update: 'updated', delete: 'deleted' } as const

  // Proxies first: a route a deleted proxy held is free for the file's.
  for (const [k, p] of state.proxies) {
    if (act('proxy', k) !== 'delete') continue
    await deleteProxyRow(q, p.id)
    done('proxy', p.id, 'delete', { resource_kind: 'proxy', proxy_id: p.id, collection_id: p.collection_id, operation: 'deleted', actor_sub: sub })
  }
  const policyId = new Map([...state.policies].map(([n, l]) => [n, l[0]!.id]))
  for (const p of wanted.policies) {
    const a = act('policy', p.name)
    if (a === 'create') policyId.set(p.name, (await policies.insert(q, policyFields(p))).id)
    else if (a === 'update') await policies.update(q, policyId.get(p.name)!, policyFields(p))
    if (a === 'create' || a === 'update') done('policy', policyId.get(p.name)!, a, { resource_kind: 'policy', policy_id: policyId.get(p.name)!, operation: op[a], actor_sub: sub })
  }
  const collectionId = new Map([...state.collections].map(([b, c]) => [b, c.id]))
  for (const c of wanted.collections) {
    const a = act('collection', c.base_path)
    if (a === 'create') collectionId.set(c.base_path, (await insertCollection(q, collectionFields(c))).id)
    else if (a === 'update') await setCollectionFields(q, collectionId.get(c.base_path)!, collectionFields(c))
    const cid = collectionId.get(c.base_path)!
    if (a === 'create' || a === 'update') done('collection', cid, a, { resource_kind: 'collection', collection_id: cid, operation: op[a], actor_sub: sub })
    for (const p of c.proxies) {
      const k = `${c.base_path} ${proxyKey(p)}`
      const pa = act('proxy', k)
      let id = state.proxies.get(k)?.id
      if (pa === 'create') id = (await insertProxyRow(q, { ...proxyFields(p), collection_id: cid })).id
      else if (pa === 'update') await patchProxy(q, id!, proxyFields(p))
      if (pa === 'create' || pa === 'update') done('proxy', id!, pa, { resource_kind: 'proxy', proxy_id: id!, collection_id: cid, operation: op[pa], actor_sub: sub })
    }
  }
  const clientId = new Map([...state.clients].map(([n, l]) => [n, l[0]!.id]))
  for (const c of wanted.clients) {
    const a = act('client', c.name)
    const fields = { name: c.name, description: c.description, status: c.status }
    if (a === 'create') clientId.set(c.name, (await clients.insert(q, fields)).id)
    else if (a === 'update') await clients.update(q, clientId.get(c.name)!, fields)
    if (a === 'create' || a === 'update') done('client', clientId.get(c.name)!, a, { resource_kind: 'client', client_id: clientId.get(c.name)!, operation: op[a], actor_sub: sub })
  }
  for (const [k, [p]] of state.profiles) {
    if (act('profile', k) !== 'delete') continue
    await profiles.remove(q, p!.id)
    done('profile', p!.id, 'delete', { resource_kind: 'profile', profile_id: p!.id, client_id: p!.client_id, operation: 'deleted', actor_sub: sub })
  }
  const profileFields = (p: ConfigProfile) => ({
    name: p.name, auth_type: p.auth_type, policy_id: p.policy === null ? null : policyId.get(p.policy)!,
    collection_ids: p.collections.map(b => collectionId.get(b)!), allowed_methods: p.allowed_methods, ip_allowlist: p.ip_allowlist, oidc: p.oidc, mtls_fingerprint: p.mtls_fingerprint
  })
  for (const c of wanted.clients) {
    const cid = clientId.get(c.name)!
    for (const p of c.profiles) {
      const k = `${c.name}/${p.name}`
      const a = act('profile', k)
      const stored = state.profiles.get(k)?.[0]
      let id = stored?.id
      if (a === 'create') {
        id = randomUUID()
        await profiles.insert(q, { ...profileFields(p), id, client_id: cid, ...material(key, p.auth_type, id) })
      } else if (a === 'update') {
        // Another auth type gets new key material, as PUT …/auth-type issues it.
        await profiles.update(q, id!, { ...profileFields(p), ...stored!.auth_type !== p.auth_type ? material(key, p.auth_type, id!) : {} })
      }
      if (a === 'create' || a === 'update') done('profile', id!, a, { resource_kind: 'profile', profile_id: id!, client_id: cid, operation: op[a], actor_sub: sub })
    }
  }
  for (const [name, [c]] of state.clients) {
    if (act('client', name) !== 'delete') continue
    await clients.remove(q, c!.id)
    done('client', c!.id, 'delete', { resource_kind: 'client', client_id: c!.id, operation: 'deleted', actor_sub: sub })
  }
  for (const [name, [p]] of state.policies) {
    if (act('policy', name) !== 'delete') continue
    await policies.remove(q, p!.id)
    done('policy', p!.id, 'delete', { resource_kind: 'policy', policy_id: p!.id, operation: 'deleted', actor_sub: sub })
  }
  for (const [b, c] of state.collections) {
    if (act('collection', b) !== 'delete') continue
    await deleteCollectionRow(q, c.id)
    done('collection', c.id, 'delete', { resource_kind: 'collection', collection_id: c.id, operation: 'deleted', actor_sub: sub })
  }
  for (const c of wanted.credentials) {
    const a = act('credential', c.name)
    const stored = state.credentials.get(c.name)?.[0]
    const type = c.type as CredentialType
    let id = stored?.id
    if (a === 'create') {
      id = randomUUID()
      await credentials.insert(q, { id, name: c.name, type, config: sealConfig(key, type, c.config, id) })
    } else if (a === 'update') await credentials.update(q, id!, { name: c.name, type, config: sealConfig(key, type, c.config, id) })
    if (a === 'create' || a === 'update') done('credential', id!, a, { resource_kind: 'credential', credential_id: id!, operation: op[a], actor_sub: sub })
  }
  for (const [name, [c]] of state.credentials) {
    if (act('credential', name) !== 'delete') continue
    await credentials.remove(q, c!.id)
    done('credential', c!.id, 'delete', { resource_kind: 'credential', credential_id: c!.id, operation: 'deleted', actor_sub: sub })
  }
  return { events, audit }
}
