import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

for (const kind of STORE_KINDS) {
  t.test(`policies, clients, profiles (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const coll = (await m.call('POST', '/api/v1/collections', { body: { name: 'c', base_path: '/c', upstream_url: 'http://127.0.0.1:9' } })).body
    m.events.length = 0

    // policies
    let r = await m.call('POST', '/api/v1/policies', { role: 'editor', body: { name: 'gold' } })
    t.equal(r.status, 403, 'policy writes need admin')
    r = await m.call('POST', '/api/v1/policies', { body: { name: 'gold', rate_limit: { requests: 0, per_seconds: 1 } } })
    t.equal(r.status, 400)
    r = await m.call('POST', '/api/v1/policies', { body: { name: 'gold', rate_limit: { requests: 100, per_seconds: 60 }, quota: { requests: 1000, period: 'day' } } })
    t.equal(r.status, 201)
    const pol = r.body
    t.match(pol, { status: 'enabled', rate_limit: { requests: 100, per_seconds: 60 }, quota: { requests: 1000, period: 'day' }, version: 1 })
    t.match(m.events.at(-1), { resource_kind: 'policy', policy_id: pol.id, operation: 'created', actor_sub: 'admin-user' })
    r = await m.call('PUT', `/api/v1/policies/${pol.id}/toggle-status`)
    t.equal(r.body.status, 'disabled')
    t.match(m.events.at(-1), { operation: 'status_changed' })
    r = await m.call('PUT', `/api/v1/policies/${pol.id}/toggle-status`, { body: { status: 'enabled' } })
    t.equal(r.body.status, 'enabled')
    r = await m.call('PUT', `/api/v1/policies/${pol.id}`, { body: { quota: null }, headers: { 'if-match': '"1"' } })
    t.equal(r.status, 412)
    r = await m.call('PUT', `/api/v1/policies/${pol.id}`, { body: { quota: null } })
    t.equal(r.body.quota, null)
    t.match(m.events.at(-1), { operation: 'updated' })
    t.equal((await m.call('GET', '/api/v1/policies', { role: 'viewer' })).body.items.length, 1)

    // clients
    r = await m.call('POST', '/api/v1/clients', { body: { name: 'acme' } })
    t.equal(r.status, 201)
    const cl = r.body
    t.equal(cl.status, 'active')
    t.match(m.events.at(-1), { resource_kind: 'client', client_id: cl.id, operation: 'created' })
    r = await m.call('PUT', `/api/v1/clients/${cl.id}/status`, { body: { status: 'suspended' } })
    t.equal(r.body.status, 'suspended')
    t.match(m.events.at(-1), { operation: 'status_changed' })
    r = await m.call('PUT', `/api/v1/clients/${cl.id}/status`, { body: { status: 'banned' } })
    t.equal(r.status, 400)

    // profiles
    const P = `/api/v1/clients/${cl.id}/profiles`
    r = await m.call('POST', P, { body: { name: 'k', auth_type: 'api_key', policy_id: 'nope', collection_ids: [coll.id, 'ghost'], ip_allowlist: ['10.0.0.0/8', 'bad'] } })
    t.equal(r.status, 400)
    t.same(r.body.error.details.map((d: any) => d.field).sort(), ['collection_ids', 'ip_allowlist', 'policy_id'])
    r = await m.call('POST', P, { body: { name: 'k', auth_type: 'api_key', policy_id: pol.id, collection_ids: [coll.id] } })
    t.equal(r.status, 201)
    const prof = r.body
    t.match(prof.credentials.api_key, /^gh_/)
    t.notOk('api_key_hash' in prof)
    t.notOk('secret_sealed' in prof)
    t.match(m.events.at(-1), { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'created' })
    t.notOk(JSON.stringify(m.events).includes(prof.credentials.api_key), 'no secret in events')
    r = await m.call('GET', `${P}/${prof.id}/credentials`, { role: 'viewer' })
    t.equal(r.status, 200, 'a viewer reads the profile credentials')
    t.match(r.body, { auth_type: 'api_key', api_key: '********', masked: true, headers: { 'X-Client-ID': cl.id, 'X-Profile-ID': prof.id } })
    t.equal((await m.call('GET', `${P}/${prof.id}/credentials`, { role: 'editor' })).body.api_key, '********', 'the secret itself is for admins')
    r = await m.call('GET', `${P}/${prof.id}/credentials`)
    t.equal(r.body.api_key, prof.credentials.api_key)
    const { rows } = await m.store.query('SELECT api_key_hash, secret_sealed FROM profiles WHERE id = $1', [prof.id])
    t.notOk(JSON.stringify(rows[0]).includes(prof.credentials.api_key), 'the key is not stored in clear')

    const n = m.events.length
    r = await m.call('POST', `${P}/${prof.id}/rotate`)
    t.equal(r.body.rotated, true)
    t.match(r.body, { id: prof.id, client_id: cl.id, auth_type: 'api_key', has_credentials: true }, 'the answer is the profile, like create')
    t.notOk('api_key_hash' in r.body)
    t.equal(r.headers.get('etag'), `"${String(r.body.version)}"`)
    t.not(r.body.credentials.api_key, prof.credentials.api_key)
    t.match(m.events.at(-1), { resource_kind: 'profile', operation: 'updated' })
    t.equal((await m.call('GET', `${P}/${prof.id}/credentials`)).body.api_key, r.body.credentials.api_key)

    r = await m.call('PUT', `${P}/${prof.id}/auth-type`, { body: { auth_type: 'oidc', oidc: { issuer: 'idp.example' } } })
    t.equal(r.status, 400, 'oidc settings are checked')
    r = await m.call('PUT', `${P}/${prof.id}/auth-type`, { body: { auth_type: 'oidc', oidc: { issuer: 'https://idp.example', audience: 'shop' } } })
    t.equal(r.status, 200)
    t.equal(r.body.auth_type, 'oidc')
    const before = m.events.length
    r = await m.call('POST', `${P}/${prof.id}/rotate`)
    t.equal(r.status, 200)
    t.equal(r.body.rotated, false, 'rotate on an oidc profile is a no-op')
    t.equal(m.events.length, before, 'and emits nothing')
    t.ok(m.events.length > n)

    r = await m.call('PUT', `${P}/${prof.id}/auth-type`, { body: { auth_type: 'jwt' } })
    t.equal(r.body.credentials.algorithm, 'HS256')
    t.type(r.body.credentials.jwt_secret, 'string')
    r = await m.call('PUT', `${P}/${prof.id}`, { body: { name: 'renamed', allowed_methods: ['GET'] } })
    t.equal(r.body.name, 'renamed')
    t.match(m.events.at(-1), { operation: 'updated', profile_id: prof.id })

    const other = (await m.call('POST', '/api/v1/clients', { body: { name: 'other' } })).body
    t.equal((await m.call('GET', `/api/v1/clients/${other.id}/profiles/${prof.id}`)).status, 404, 'a profile under the wrong client is not found')
    t.equal((await m.call('DELETE', `/api/v1/policies/${pol.id}`)).status, 409, 'a policy in use cannot be deleted')
    t.equal((await m.call('GET', P, { role: 'viewer' })).body.items.length, 1)
    r = await m.call('DELETE', `/api/v1/clients/${cl.id}`)
    t.equal(r.status, 204)
    t.match(m.events.at(-1), { resource_kind: 'client', operation: 'deleted' })
    t.equal((await m.call('GET', `${P}/${prof.id}`)).status, 404, 'deleting a client deletes its profiles')
    t.equal((await m.call('DELETE', `/api/v1/policies/${pol.id}`)).status, 204)
  })
}
