/** Policies, API clients and their access profiles (admin writes, viewer reads). */
import { randomBytes, randomUUID } from 'node:crypto'
import { conflict, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { parseCidr } from '../../common/cidr.js'
import { hashApiKey } from '../access/profile-auth.js'
import { decryptSecret, encryptSecret, loadSecretsKey } from '../credentials/secrets.js'
import { SECRET_MASK } from '../credentials/types.js'
import { hasRole } from '../auth/roles.js'
import { clients, policies, profiles, publicProfile, type ProfileRow } from '../store/access.js'
import type { Queryable } from '../store/types.js'
import type { BaseRecord } from '../../common/types.js'
import type { EventInput } from '../events/types.js'
import type { records } from '../store/records.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { etag, pageQuery } from './validation.js'

const name = { type: 'string', minLength: 1, maxLength: 200 }
const description = { type: 'string', maxLength: 5000 }
export const policyFields = {
  name, description,
  status: { type: 'string', enum: ['enabled', 'disabled'] },
  rate_limit: { type: ['object', 'null'], additionalProperties: false, required: ['requests', 'per_seconds'], properties: { requests: { type: 'integer', minimum: 1 }, per_seconds: { type: 'integer', minimum: 1, maximum: 31_536_000 } } },
  quota: { type: ['object', 'null'], additionalProperties: false, required: ['requests', 'period'], properties: { requests: { type: 'integer', minimum: 1 }, period: { type: 'string', enum: ['day', 'month'] } } }
}
export const clientFields = { name, description, status: { type: 'string', enum: ['active', 'suspended'] } }
const AUTH_TYPES = ['api_key', 'jwt', 'oidc', 'mtls', 'none']
export const profileFields = {
  // May be sent (it is a field of the record); must then be the client of the path.
  client_id: { type: 'string', minLength: 1 },
  name,
  auth_type: { type: 'string', enum: AUTH_TYPES },
  policy_id: { type: ['string', 'null'] },
  collection_ids: { type: 'array', maxItems: 1000, uniqueItems: true, items: { type: 'string', minLength: 1 } },
  allowed_methods: { type: ['array', 'null'], uniqueItems: true, items: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'] } },
  ip_allowlist: { type: ['array', 'null'], maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 64 } },
  oidc: { type: ['object', 'null'], additionalProperties: false, required: ['issuer'], properties: { issuer: { type: 'string', pattern: '^https?://' }, jwks_url: { type: ['string', 'null'], pattern: '^https?://' }, audience: { type: ['string', 'null'] } } },
  mtls_fingerprint: { type: ['string', 'null'], pattern: '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$' }
}
type Records<R extends BaseRecord> = ReturnType<typeof records<R>>
const obj = (props: object, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties: props })
/** Profile fields a client may send back as it read them; they cannot be set. */
const PROFILE_READ_ONLY = ['has_credentials', 'rotated_at', 'credentials']

export function registerAccessRoutes (router: Router, deps: ManagementDeps): void {
  const { store, events } = deps
  let key: Promise<Buffer> | null = null
  const secretsKey = async () => await (key ??= loadSecretsKey({ secretsKey: deps.config.SECRETS_KEY, dataDir: deps.config.DATA_DIR }))
  const changed = () => deps.onConfigChange()
  const sub = (ctx: { user: { sub: string } | null }) => ctx.user?.sub

  /** List, read, create and update of policies and clients: the same four routes, each change with its event. */
  const recordRoutes = <R extends BaseRecord>(plural: string, repo: Pick<Records<R>, 'list' | 'get' | 'insert' | 'update'>,
    fields: object, defaults: Record<string, unknown>, event: (id: string, operation: 'created' | 'updated', ctx: { user: { sub: string } | null }) => EventInput) => {
    const path = `/api/v1/${plural}`
    router.add('GET', path, async ctx => ({ status: 200, body: await repo.list(store, pageQuery(ctx.query)) }))
    router.add('GET', `${path}/:id`, async ctx => { const r = await repo.get(store, ctx.params.id); return { status: 200, body: r, headers: etag(r.version) } })
    router.add('POST', path, async ctx => {
      const r = await store.tx(async q => await repo.insert(q, { ...defaults, ...ctx.body }))
      events.publish(event(r.id, 'created', ctx))
      changed()
      return { status: 201, body: r, headers: etag(r.version) }
    }, { role: 'admin', body: obj(fields, ['name']) })
    router.add('PUT', `${path}/:id`, async ctx => {
      const { after } = await store.tx(async q => await repo.update(q, ctx.params.id, ctx.body ?? {}, ctx.ifMatch))
      events.publish(event(after.id, 'updated', ctx))
      changed()
      return { status: 200, body: after, headers: etag(after.version) }
    }, { role: 'admin', body: obj(fields) })
  }

  // --- policies ---------------------------------------------------------------
  recordRoutes('policies', policies, policyFields, { status: 'enabled', description: '' },
    (id, operation, ctx) => ({ resource_kind: 'policy', policy_id: id, operation, actor_sub: sub(ctx) }))
  router.add('PUT', '/api/v1/policies/:id/toggle-status', async ctx => {
    const { after } = await store.tx(async q => {
      const cur = await policies.lock(q, ctx.params.id)
      const next = ctx.body?.status ?? (cur.status === 'enabled' ? 'disabled' : 'enabled')
      return await policies.update(q, ctx.params.id, { status: next }, ctx.ifMatch)
    })
    events.publish({ resource_kind: 'policy', policy_id: after.id, operation: 'status_changed', actor_sub: sub(ctx) })
    changed()
    return { status: 200, body: after, headers: etag(after.version) }
  }, { role: 'admin', body: obj({ status: policyFields.status }) })
  router.add('DELETE', '/api/v1/policies/:id', async ctx => {
    const p = await store.tx(async q => {
      const { rows } = await q.query<{ id: string, name: string }>('SELECT id, name FROM profiles WHERE policy_id = $1 ORDER BY seq LIMIT 5', [ctx.params.id])
      if (rows.length > 0) throw conflict(`The policy is used by profile${rows.length > 1 ? 's' : ''} ${rows.map(r => `'${r.name}'`).join(', ')}; assign them another policy first.`)
      return await policies.remove(q, ctx.params.id, ctx.ifMatch)
    })
    events.publish({ resource_kind: 'policy', policy_id: p.id, operation: 'deleted', actor_sub: sub(ctx) })
    changed()
    return { status: 204 }
  }, { role: 'admin' })

  // --- clients ----------------------------------------------------------------
  recordRoutes('clients', clients, clientFields, { status: 'active', description: '' },
    (id, operation, ctx) => ({ resource_kind: 'client', client_id: id, operation, actor_sub: sub(ctx) }))
  router.add('PUT', '/api/v1/clients/:id/status', async ctx => {
    const { after } = await store.tx(async q => {
      // Without a status the route toggles active <-> suspended.
      const next = ctx.body.status ?? ((await clients.lock(q, ctx.params.id)).status === 'active' ? 'suspended' : 'active')
      return await clients.update(q, ctx.params.id, { status: next }, ctx.ifMatch)
    })
    events.publish({ resource_kind: 'client', client_id: after.id, operation: 'status_changed', actor_sub: sub(ctx) })
    changed()
    return { status: 200, body: after, headers: etag(after.version) }
  }, { role: 'admin', body: obj({ status: clientFields.status }) })
  router.add('DELETE', '/api/v1/clients/:id', async ctx => {
    const c = await store.tx(async q => await clients.remove(q, ctx.params.id, ctx.ifMatch))
    events.publish({ resource_kind: 'client', client_id: c.id, operation: 'deleted', actor_sub: sub(ctx) })
    changed()
    return { status: 204 }
  }, { role: 'admin' })

  // --- profiles ---------------------------------------------------------------
  const base = '/api/v1/clients/:clientId/profiles'
  const inClient = (clientId: string) => ({ client_id: clientId })
  const checkRefs = async (q: Queryable, body: Record<string, any>, clientId: string) => {
    const details: ErrorDetail[] = []
    if (body.client_id !== undefined && body.client_id !== clientId) details.push({ field: 'client_id', message: `must be the client of the path ('${clientId}'); a profile cannot move to another client` })
    if (body.policy_id != null) {
      const { rows } = await q.query('SELECT 1 FROM policies WHERE id = $1', [body.policy_id])
      if (rows.length === 0) details.push({ field: 'policy_id', message: `policy '${String(body.policy_id)}' does not exist` })
    }
    if (Array.isArray(body.collection_ids) && body.collection_ids.length > 0) {
      const { rows } = await q.query<{ id: string }>('SELECT id FROM collections WHERE id = ANY($1::text[])', [body.collection_ids])
      const found = new Set(rows.map(r => r.id))
      for (const id of body.collection_ids as string[]) if (!found.has(id)) details.push({ field: 'collection_ids', message: `collection '${id}' does not exist` })
    }
    for (const c of (body.ip_allowlist ?? []) as string[]) if (parseCidr(c) === null) details.push({ field: 'ip_allowlist', message: `'${c}' is not an IP address or CIDR` })
    // An oidc profile without `oidc` settings, or an mtls one without a fingerprint, may be saved:
    // the gateway refuses its calls (401) until they are set.
    if (details.length > 0) throw validationFailed(`The profile is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  }
  /** New secret material for the types that have some. */
  const material = async (authType: string, record: string): Promise<{ api_key_hash: string | null, secret_sealed: string | null, plain: Record<string, string> }> => {
    if (authType === 'api_key') {
      const token = `gh_${randomBytes(32).toString('base64url')}`
      return { api_key_hash: hashApiKey(token), secret_sealed: encryptSecret(await secretsKey(), token, 'profile.api_key', record), plain: { api_key: token } }
    }
    if (authType === 'jwt') {
      const secret = randomBytes(32).toString('base64url')
      return { api_key_hash: null, secret_sealed: encryptSecret(await secretsKey(), secret, 'profile.jwt_secret', record), plain: { jwt_secret: secret, algorithm: 'HS256' } }
    }
    return { api_key_hash: null, secret_sealed: null, plain: {} }
  }
  const profileEvent = (p: ProfileRow, operation: 'created' | 'updated' | 'deleted', s: string | undefined) =>
    events.publish({ resource_kind: 'profile', profile_id: p.id, client_id: p.client_id, operation, actor_sub: s })

  router.add('GET', base, async ctx => {
    await clients.get(store, ctx.params.clientId)
    const page = await profiles.list(store, pageQuery(ctx.query), inClient(ctx.params.clientId))
    return { status: 200, body: { ...page, items: page.items.map(publicProfile) } }
  })
  router.add('GET', `${base}/:id`, async ctx => {
    const p = await profiles.get(store, ctx.params.id, inClient(ctx.params.clientId))
    return { status: 200, body: publicProfile(p), headers: etag(p.version) }
  })
  router.add('POST', base, async ctx => {
    const authType = ctx.body.auth_type ?? 'api_key'
    const id = randomUUID()
    const m = await material(authType, id)
    const p = await store.tx(async q => {
      await clients.lock(q, ctx.params.clientId)
      await checkRefs(q, ctx.body, ctx.params.clientId)
      return await profiles.insert(q, { collection_ids: [], ...ctx.body, id, auth_type: authType, client_id: ctx.params.clientId, api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed })
    })
    profileEvent(p, 'created', sub(ctx))
    changed()
    return { status: 201, body: { ...publicProfile(p), credentials: { auth_type: authType, ...m.plain } }, headers: etag(p.version) }
  }, { role: 'admin', body: obj(profileFields, ['name']), readOnly: PROFILE_READ_ONLY })
  router.add('PUT', `${base}/:id`, async ctx => {
    const { after } = await store.tx(async q => {
      const cur = await profiles.lock(q, ctx.params.id, inClient(ctx.params.clientId))
      await checkRefs(q, ctx.body, ctx.params.clientId)
      if (ctx.body.auth_type !== undefined && ctx.body.auth_type !== cur.auth_type) {
        throw validationFailed('auth_type changes through PUT /api/v1/clients/:clientId/profiles/:id/auth-type, which issues the new credentials.', [{ field: 'auth_type', message: 'cannot change here; use the auth-type route' }])
      }
      const { auth_type: _same, client_id: _path, ...patch } = ctx.body
      return await profiles.update(q, ctx.params.id, patch, ctx.ifMatch, inClient(ctx.params.clientId))
    })
    profileEvent(after, 'updated', sub(ctx))
    changed()
    return { status: 200, body: publicProfile(after), headers: etag(after.version) }
  }, { role: 'admin', body: obj(profileFields), readOnly: PROFILE_READ_ONLY })
  router.add('DELETE', `${base}/:id`, async ctx => {
    const p = await store.tx(async q => await profiles.remove(q, ctx.params.id, ctx.ifMatch, inClient(ctx.params.clientId)))
    profileEvent(p, 'deleted', sub(ctx))
    changed()
    return { status: 204 }
  }, { role: 'admin' })
  router.add('POST', `${base}/:id/rotate`, async ctx => {
    const done = await store.tx(async q => {
      // Locked, so the material issued matches the auth type it is stored for.
      const cur = await profiles.lock(q, ctx.params.id, inClient(ctx.params.clientId))
      if (cur.auth_type !== 'api_key' && cur.auth_type !== 'jwt') return { noop: cur, after: null, m: null }
      const m = await material(cur.auth_type, cur.id)
      const { after } = await profiles.update(q, cur.id, { api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed, rotated_at: new Date().toISOString() }, ctx.ifMatch)
      return { noop: null, after, m }
    })
    if (done.noop !== null) {
      // Nothing the service issued to rotate: a no-op answer, no event.
      const t = done.noop.auth_type
      return { status: 200, body: { ...publicProfile(done.noop), rotated: false, reason: `A ${t} profile has no service-issued credentials to rotate.` }, headers: etag(done.noop.version) }
    }
    const after = done.after!
    const m = done.m!
    profileEvent(after, 'updated', sub(ctx))
    changed()
    // Shaped like the create and auth-type answers: the profile, plus the new material once.
    return { status: 200, body: { ...publicProfile(after), rotated: true, credentials: { auth_type: after.auth_type, ...m.plain } }, headers: etag(after.version) }
  }, { role: 'admin' })
  router.add('PUT', `${base}/:id/auth-type`, async ctx => {
    const authType = ctx.body.auth_type as string
    const m = await material(authType, ctx.params.id)
    const { after } = await store.tx(async q => {
      const cur = await profiles.lock(q, ctx.params.id, inClient(ctx.params.clientId))
      await checkRefs(q, ctx.body, ctx.params.clientId)
      return await profiles.update(q, cur.id, { ...ctx.body, auth_type: authType, api_key_hash: m.api_key_hash, secret_sealed: m.secret_sealed }, ctx.ifMatch)
    })
    profileEvent(after, 'updated', sub(ctx))
    changed()
    return { status: 200, body: { ...publicProfile(after), credentials: { auth_type: authType, ...m.plain } }, headers: etag(after.version) }
  }, { role: 'admin', body: obj({ auth_type: profileFields.auth_type, oidc: profileFields.oidc, mtls_fingerprint: profileFields.mtls_fingerprint }, ['auth_type']) })
  router.add('GET', `${base}/:id/credentials`, async ctx => {
    const p = await profiles.get(store, ctx.params.id, inClient(ctx.params.clientId))
    // A read like any other (viewer), but the secret itself is for admins: others see the mask.
    const masked = !hasRole(ctx.user?.role ?? null, 'admin')
    const body: Record<string, unknown> = { profile_id: p.id, client_id: p.client_id, auth_type: p.auth_type, masked }
    if (p.secret_sealed !== null) {
      const plain = masked ? SECRET_MASK : decryptSecret(await secretsKey(), p.secret_sealed, p.auth_type === 'api_key' ? 'profile.api_key' : 'profile.jwt_secret', p.id)
      if (p.auth_type === 'api_key') body.api_key = plain
      else { body.jwt_secret = plain; body.algorithm = 'HS256' }
    }
    if (p.auth_type === 'oidc') body.oidc = p.oidc
    if (p.auth_type === 'mtls') body.mtls_fingerprint = p.mtls_fingerprint
    body.headers = { 'X-Client-ID': p.client_id, 'X-Profile-ID': p.id }
    return { status: 200, body }
  })
}
