/**
 * Bodies as clients really send them: none at all, a record sent back as it was read
 * (with its id, version and timestamps), status routes without a status (a toggle),
 * a profile naming its client, oidc/mtls profiles saved before their settings, the
 * usual IMAP TLS shorthands, and assistant roles beyond the four best known.
 */
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'

const UPSTREAM = 'http://127.0.0.1:9'

for (const kind of STORE_KINDS) {
  t.test(`request bodies (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const coll = (await m.call('POST', '/api/v1/collections', { body: { name: 'c', base_path: '/c', upstream_url: UPSTREAM } })).body
    const proxy = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: coll.id, name: 'p', methods: ['GET'], path: '/p' } })).body
    const cred = (await m.call('POST', '/api/v1/credentials', { body: { name: 'b', type: 'http_bearer', config: { token: 'tok-123456' } } })).body
    const pol = (await m.call('POST', '/api/v1/policies', { body: { name: 'gold' } })).body
    const cl = (await m.call('POST', '/api/v1/clients', { body: { name: 'acme' } })).body
    const P = `/api/v1/clients/${cl.id}/profiles`
    const prof = (await m.call('POST', P, { body: { name: 'k' } })).body

    t.test('an update without a body changes nothing but answers the record', async t => {
      for (const path of [`/api/v1/collections/${coll.id}`, `/api/v1/proxies/${proxy.id}`, `/api/v1/credentials/${cred.id}`,
        `/api/v1/policies/${pol.id}`, `/api/v1/clients/${cl.id}`, `${P}/${prof.id}`]) {
        const before = (await m.call('GET', path)).body
        const r = await m.call('PUT', path)
        t.equal(r.status, 200, `PUT ${path} without a body`)
        t.equal(r.body.id, before.id)
        t.equal(r.body.name, before.name, 'nothing changed')
      }
      const r = await m.call('POST', `/api/v1/collections/${coll.id}/duplicate`)
      t.equal(r.status, 201, 'a duplicate without a body takes the defaults')
    })

    t.test('a record sent back as read: read-only fields are ignored', async t => {
      const cases: Array<[string, (x: any) => any]> = [
        [`/api/v1/collections/${coll.id}`, x => ({ ...x, description: 'sent back' })],
        [`/api/v1/proxies/${proxy.id}`, x => ({ ...x, description: 'sent back' })],
        [`/api/v1/credentials/${cred.id}`, x => ({ ...x, name: 'sent back' })],
        [`/api/v1/policies/${pol.id}`, x => ({ ...x, description: 'sent back' })],
        [`/api/v1/clients/${cl.id}`, x => ({ ...x, description: 'sent back' })],
        [`${P}/${prof.id}`, x => ({ ...x, name: 'sent back' })]
      ]
      for (const [path, edit] of cases) {
        const read = await m.call('GET', path)
        const r = await m.call('PUT', path, { body: edit(read.body), headers: { 'if-match': read.headers.get('etag')! } })
        t.equal(r.status, 200, `PUT ${path} with the record as read`)
        t.equal(r.body.id, read.body.id, 'the id is not changed')
        t.equal(r.body.version, read.body.version + 1, 'the version is the server\'s')
        t.equal(r.body.created_at, read.body.created_at)
        t.ok(r.body.description === 'sent back' || r.body.name === 'sent back', 'the change is applied')
      }
      const read = (await m.call('GET', '/api/v1/copilot/thread')).body
      t.equal((await m.call('PUT', '/api/v1/copilot/thread', { body: { ...read, messages: [{ role: 'user', content: 'hi' }] } })).status, 200, 'a thread as read')
      const r = await m.call('PUT', `/api/v1/collections/${coll.id}`, { body: { id: coll.id, nonsense: 1 } })
      t.equal(r.status, 400, 'unknown fields are still refused')
      t.same(r.body.error.details.map((d: any) => d.field), ['nonsense'])
    })

    t.test('status routes without a status toggle', async t => {
      let r = await m.call('PUT', `/api/v1/collections/${coll.id}/status`)
      t.equal(r.body.status, 'disabled')
      r = await m.call('PUT', `/api/v1/collections/${coll.id}/status`, { body: {} })
      t.equal(r.body.status, 'active')
      r = await m.call('PUT', `/api/v1/clients/${cl.id}/status`)
      t.equal(r.body.status, 'suspended')
      r = await m.call('PUT', `/api/v1/clients/${cl.id}/status`)
      t.equal(r.body.status, 'active')
      r = await m.call('PUT', `/api/v1/clients/${cl.id}/status`, { body: { status: 'active' } })
      t.equal(r.body.status, 'active', 'an explicit status is set as given')
      t.equal((await m.call('PUT', `/api/v1/clients/${cl.id}/status`, { body: { status: 'paused' } })).status, 400)
    })

    t.test('profiles: client_id may be sent and must match the path; oidc and mtls settings may come later', async t => {
      let r = await m.call('POST', P, { body: { client_id: cl.id, name: 'named', auth_type: 'api_key' } })
      t.equal(r.status, 201)
      t.equal(r.body.client_id, cl.id)
      r = await m.call('POST', P, { body: { client_id: 'another', name: 'moved' } })
      t.equal(r.status, 400)
      t.same(r.body.error.details.map((d: any) => d.field), ['client_id'])
      r = await m.call('PUT', `${P}/${prof.id}`, { body: { client_id: 'another' } })
      t.equal(r.status, 400, 'a profile cannot move to another client')
      r = await m.call('PUT', `${P}/${prof.id}`, { body: { auth_type: 'jwt' } })
      t.equal(r.status, 400, 'auth_type changes through the auth-type route')
      t.match(r.body.error.message, /auth-type/)

      r = await m.call('POST', P, { body: { name: 'sso', auth_type: 'oidc' } })
      t.equal(r.status, 201, 'an oidc profile without its settings is saved')
      t.match(r.body, { auth_type: 'oidc', oidc: null, has_credentials: false })
      const rot = await m.call('POST', `${P}/${r.body.id}/rotate`)
      t.match(rot.body, { rotated: false, auth_type: 'oidc' })
      r = await m.call('POST', P, { body: { name: 'cert', auth_type: 'mtls' } })
      t.equal(r.status, 201, 'an mtls profile without a fingerprint is saved')
      r = await m.call('PUT', `${P}/${r.body.id}/auth-type`, { body: { auth_type: 'oidc' } })
      t.equal(r.status, 200)
      r = await m.call('POST', P, { body: { name: 'bad', auth_type: 'oidc', oidc: { issuer: 'not a url' } } })
      t.equal(r.status, 400, 'settings that are sent are still checked')
    })

    t.test('IMAP TLS shorthands fold into tls', async t => {
      const base = { host: 'imap.example.com', username: 'u', password: 'secret-pass' }
      let r = await m.call('POST', '/api/v1/credentials', { body: { name: 'a', type: 'imap', config: { ...base, tls: true } } })
      t.equal(r.status, 201)
      t.match(r.body.config, { port: 993, tls: { secure: true, reject_unauthorized: true }, password: '********' })
      r = await m.call('POST', '/api/v1/credentials', { body: { name: 'b', type: 'imap', config: { ...base, port: 143, secure: false, starttls: true } } })
      t.equal(r.status, 201)
      t.match(r.body.config, { port: 143, tls: { secure: false, starttls: true } })
      t.notOk('secure' in r.body.config)
      r = await m.call('POST', '/api/v1/credentials', { body: { name: 'c', type: 'imap', config: { ...base, tls: false } } })
      t.match(r.body.config, { port: 143, tls: { secure: false } })
      r = await m.call('POST', '/api/v1/credentials', { body: { name: 'd', type: 'imap', config: { ...base, tls: 'yes' } } })
      t.equal(r.status, 400, 'anything else is still refused')
    })

    t.test('assistant threads keep any role name', async t => {
      const r = await m.call('PUT', '/api/v1/developer-portal/copilot/thread', { body: { messages: [{ role: 'developer', content: 'be brief' }, { role: 'function', content: { ok: true } }] } })
      t.equal(r.status, 200)
      t.same(r.body.messages.map((x: any) => x.role), ['developer', 'function'])
      t.equal((await m.call('PUT', '/api/v1/developer-portal/copilot/thread', { body: { messages: [{ role: '', content: 'x' }] } })).status, 400)
    })
  })
}
