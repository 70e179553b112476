/**
 * Access profile operations (a client's ways in: api_key, jwt, oidc, mtls, none). Material the
 * service issues (an api_key's token, a jwt profile's signing key) is sealed at rest and shown
 * once, in the answer of the change that issued it; the credentials read shows it to admins only.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import { parseCidr } from '../../common/cidr.js'
import type { Page } from '../../common/types.js'
import { hashApiKey } from '../access/profile-auth.js'
import { hasRole } from '../auth/roles.js'
import { decryptSecret, encryptSecret } from '../credentials/secrets.js'
import { SECRET_MASK } from '../credentials/types.js'
import { clients, existingCollectionIds, policyExists, profiles, publicProfile, type ProfileRecord, type ProfileRow } from '../store/access.js'
import type { PageQuery } from '../store/rows.js'
import type { Queryable } from '../store/types.js'
import type { Caller, Change, OperationDeps } from './types.js'

type PublicProfile = ReturnType<typeof publicProfile>
/** A profile of a client: the path names both. */
export interface ProfileRef { clientId: string, id: string, ifMatch?: number }
export type ProfileFields = Partial<Omit<ProfileRecord, 'id' | 'version' | 'created_at' | 'updated_at' | 'rotated_at'>>
type Issued = Record<string, string>

const inClient = (clientId: string) => ({ client_id: clientId })
const change = (p: ProfileRow, operation: 'created' | 'updated' | 'deleted'): Change =>
  ({ resource_kind: 'profile', profile_id: p.id, client_id: p.client_id, operation })

async function checkRefs (q: Queryable, body: ProfileFields, clientId: string): Promise<void> {
  const details: ErrorDetail[] = []
  if (body.client_id !== undefined && body.client_id !== clientId) details.push({ field: 'client_id', message: `must be the client of the path ('${clientId}'); a profile cannot move to another client` })
  if (body.policy_id != null && !await policyExists(q, body.policy_id)) details.push({ field: 'policy_id', message: `policy '${String(body.policy_id)}' does not exist` })
  if (Array.isArray(body.collection_ids) && body.collection_ids.length > 0) {
    const found = await existingCollectionIds(q, body.collection_ids)
    for (const id of body.collection_ids) if (!found.has(id)) details.push({ field: 'collection_ids', message: `collection '${id}' does not exist` })
  }
  for (const c of body.ip_allowlist ?? []) if (parseCidr(c) === null) details.push({ field: 'ip_allowlist', message: `'${c}' is not an IP address or CIDR` })
  // An oidc profile without `oidc` settings, or an mtls one without a fingerprint, may be saved:
  // the gateway refuses its calls (401) until they are set.
  if (details.length > 0) throw validationFailed(`The profile is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
}

/** New secret material for the types that have some. */
async function material (deps: Pick<OperationDeps, 'secretsKey'>, authType: string, record: string): Promise<{ api_key_hash: string | null, secret_sealed: string | null, plain: Issued }> {
  if (authType === 'api_key') {
    const token = `gh_${randomBytes(32).toString('base64url')}`
    return { api_key_hash: hashApiKey(token), secret_sealed: encryptSecret(await deps.secretsKey(), token, 'profile.api_key', record), plain: { api_key: token } }
  }
  if (authType === 'jwt') {
    const secret = randomBytes(32).toString('base64url')
    return { api_key_hash: null, secret_sealed: encryptSecret(await deps.secretsKey(), secret, 'profile.jwt_secret', record), plain: { jwt_secret: secret, algorithm: 'HS256' } }
  }
  return { api_key_hash: null, secret_sealed: null, plain: {} }
}

export async function listProfilesOp (deps: OperationDeps, _caller: Caller, input: { clientId: string, page: PageQuery }): Promise<Page<PublicProfile>> {
  await clients.get(deps.store, input.clientId)
  const page = await profiles.list(deps.store, input.page, inClient(input.clientId))
  return { ...page, items: page.items.map(publicProfile) }
}

export async function getProfileOp (deps: OperationDeps, _caller: Caller, input: ProfileRef): Promise<PublicProfile> {
  return publicProfile(await profiles.get(deps.store, input.id, inClient(input.clientId)))
}

export async function createProfileOp (deps: OperationDeps, caller: Caller, input: { clientId: string, fields: ProfileFields & { name: string } }): Promise<PublicProfile & { credentials: Issued }> {
  const body = input.fields
  const authType = body.auth_type ?? 'api_key'
  const id = randomUUID()
  const m = await material(deps, authType, id)
  const p = await deps.store.tx(async q => {
    await clients.lock(q, input.clientId)
    await checkRefs(q, body, input.clientId)
    return await profiles.insert(q, { collection_ids: [], ...body, id, auth_type: authType, client_id: input.clientId, api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed })
  })
  deps.effects.changed(caller, change(p, 'created'))
  return { ...publicProfile(p), credentials: { auth_type: authType, ...m.plain } }
}

export async function updateProfileOp (deps: OperationDeps, caller: Caller, input: ProfileRef & { fields: ProfileFields }): Promise<PublicProfile> {
  const body = input.fields
  const { after } = await deps.store.tx(async q => {
    const cur = await profiles.lock(q, input.id, inClient(input.clientId))
    await checkRefs(q, body, input.clientId)
    if (body.auth_type !== undefined && body.auth_type !== cur.auth_type) {
      throw validationFailed('auth_type changes through PUT /api/v1/clients/:clientId/profiles/:id/auth-type, which issues the new credentials.', [{ field: 'auth_type', message: 'cannot change here; use the auth-type route' }])
    }
    const { auth_type: _same, client_id: _path, ...patch } = body
    return await profiles.update(q, input.id, patch, input.ifMatch, inClient(input.clientId))
  })
  deps.effects.changed(caller, change(after, 'updated'))
  return publicProfile(after)
}

export async function deleteProfileOp (deps: OperationDeps, caller: Caller, input: ProfileRef): Promise<ProfileRow> {
  const p = await deps.store.tx(async q => await profiles.remove(q, input.id, input.ifMatch, inClient(input.clientId)))
  deps.effects.changed(caller, change(p, 'deleted'))
  return p
}

/** New material for an api_key or jwt profile; for the others a no-op answer, and no event. */
export async function rotateProfileOp (deps: OperationDeps, caller: Caller, input: ProfileRef): Promise<PublicProfile & ({ rotated: false, reason: string } | { rotated: true, credentials: Issued })> {
  const done = await deps.store.tx(async q => {
    // Locked, so the material issued matches the auth type it is stored for.
    const cur = await profiles.lock(q, input.id, inClient(input.clientId))
    if (cur.auth_type !== 'api_key' && cur.auth_type !== 'jwt') return { noop: cur, after: null, m: null }
    const m = await material(deps, cur.auth_type, cur.id)
    const { after } = await profiles.update(q, cur.id, { api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed, rotated_at: new Date().toISOString() }, input.ifMatch)
    return { noop: null, after, m }
  })
  if (done.noop !== null) {
    const t = done.noop.auth_type
    return { ...publicProfile(done.noop), rotated: false, reason: `A ${t} profile has no service-issued credentials to rotate.` }
  }
  const after = done.after!
  const m = done.m!
  deps.effects.changed(caller, change(after, 'updated'))
  // Shaped like the create and auth-type answers: the profile, plus the new material once.
  return { ...publicProfile(after), rotated: true, credentials: { auth_type: after.auth_type, ...m.plain } }
}

export async function setProfileAuthTypeOp (deps: OperationDeps, caller: Caller, input: ProfileRef & { fields: ProfileFields & { auth_type: ProfileRecord['auth_type'] } }): Promise<PublicProfile & { credentials: Issued }> {
  const body = input.fields
  const authType = body.auth_type
  const m = await material(deps, authType, input.id)
  const { after } = await deps.store.tx(async q => {
    const cur = await profiles.lock(q, input.id, inClient(input.clientId))
    await checkRefs(q, body, input.clientId)
    return await profiles.update(q, cur.id, { ...body, auth_type: authType, api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed }, input.ifMatch)
  })
  deps.effects.changed(caller, change(after, 'updated'))
  return { ...publicProfile(after), credentials: { auth_type: authType, ...m.plain } }
}

/** A read like any other (viewer), but the secret itself is for admins: others see the mask. */
export async function getProfileCredentialsOp (deps: OperationDeps, caller: Caller, input: ProfileRef): Promise<Record<string, unknown>> {
  const p = await profiles.get(deps.store, input.id, inClient(input.clientId))
  const masked = !hasRole(caller.role, 'admin')
  const body: Record<string, unknown> = { profile_id: p.id, client_id: p.client_id, auth_type: p.auth_type, masked }
  if (p.secret_sealed !== null) {
    const plain = masked ? SECRET_MASK : decryptSecret(await deps.secretsKey(), p.secret_sealed, p.auth_type === 'api_key' ? 'profile.api_key' : 'profile.jwt_secret', p.id)
    if (p.auth_type === 'api_key') body.api_key = plain
    else { body.jwt_secret = plain; body.algorithm = 'HS256' }
  }
  if (p.auth_type === 'oidc') body.oidc = p.oidc
  if (p.auth_type === 'mtls') body.mtls_fingerprint = p.mtls_fingerprint
  body.headers = { 'X-Client-ID': p.client_id, 'X-Profile-ID': p.id }
  return body
}
