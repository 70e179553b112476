/** The credentials routes on both stores, and the live IMAP check against a real Dovecot. */
import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'
import { startDovecot } from '../../helpers/dovecot.js'

for (const kind of STORE_KINDS) {
  t.test(`credentials (${kind})`, async t => {
    const m = await startManagement(t, kind)
    m.events.length = 0
    let r = await m.call('POST', '/api/v1/credentials', { body: { name: 'mail', type: 'imap', config: { host: '127.0.0.1', port: 143, username: 'u', password: 's3cret-pass', tls: { secure: false, reject_unauthorized: false } } } })
    t.equal(r.status, 201)
    const cred = r.body
    t.equal(cred.config.password, '********', 'masked on the way out')
    t.match(m.events.at(-1), { resource_kind: 'credential', credential_id: cred.id, operation: 'created' })
    const { rows } = await m.store.query('SELECT config FROM credentials WHERE id = $1', [cred.id])
    t.notOk(JSON.stringify(rows[0]).includes('s3cret-pass'), 'encrypted at rest')
    r = await m.call('GET', `/api/v1/credentials/${cred.id}`, { role: 'viewer' })
    t.equal(r.body.config.password, '********')
    r = await m.call('PUT', `/api/v1/credentials/${cred.id}`, { body: { config: { ...r.body.config, username: 'v' } } })
    t.equal(r.status, 200, 'sending the mask back keeps the secret')
    t.equal(r.body.config.username, 'v')
    r = await m.call('POST', '/api/v1/credentials', { body: { name: 'bad', type: 'imap', config: { port: 99999 } } })
    t.equal(r.status, 400)
    t.ok(r.body.error.details.length > 0)
    r = await m.call('POST', '/api/v1/credentials', { role: 'editor', body: { name: 'x', type: 'http_bearer', config: { token: 't' } } })
    t.equal(r.status, 403)
    t.notOk(JSON.stringify(m.events).includes('s3cret'), 'no secret in events')
    const before = m.events.length
    r = await m.call('DELETE', `/api/v1/credentials/${cred.id}`)
    t.equal(r.status, 204)
    t.equal(m.events.length, before + 1)
    t.match(m.events.at(-1), { operation: 'deleted' })
  })
}

t.test('credentials/validate against a real Dovecot', async t => {
  const dove = await startDovecot()
  t.teardown(() => dove.stop())
  const m = await startManagement(t, 'embedded')
  const config = { host: dove.host, port: dove.port, username: dove.user, password: dove.password, tls: { secure: false, reject_unauthorized: false } }
  let r = await m.call('POST', '/api/v1/credentials/validate', { body: { type: 'imap', config } })
  t.equal(r.status, 200)
  t.equal(r.body.ok, true)
  r = await m.call('POST', '/api/v1/credentials/validate', { body: { type: 'imap', config: { ...config, password: 'wrong-one' } } })
  t.equal(r.body.ok, false)
  t.equal(r.body.reason, 'login_refused')
  t.notOk(JSON.stringify(r.body).includes('wrong-one'))
  r = await m.call('POST', '/api/v1/credentials/validate', { body: { type: 'kafka', config: {} } })
  t.equal(r.status, 400)
  t.equal(m.events.length, 0, 'validation emits nothing and saves nothing')
})
