/**
 * Secrets (credential secret fields, profile API keys and JWT secrets) never reach a log
 * line (at the most verbose level), an event, an error message or a read other than the
 * profile credentials route read by an admin, whatever the requests do: valid, invalid, refused,
 * stale or failing.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'

for (const kind of STORE_KINDS) {
  t.test(`no secret in logs, events or answers (${kind})`, async t => {
    let log = ''
    const sink = new Writable({ write (chunk: Buffer, _enc, cb) { log += chunk.toString(); cb() } })
    const m = await startManagement(t, kind, { logger: pino({ level: 'trace' }, sink) })
    const answers: string[] = []
    const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const r = await m.call(method, path, { body, headers })
      answers.push(JSON.stringify(r.body ?? ''))
      return r
    }
    const secrets = ['imap-pass-one', 'imap-pass-two', 'bearer-token-x1', 'kafka-sasl-pass', 'basic-pass-zz']
    const imap = { host: '127.0.0.1', port: 1, username: 'mailer', password: secrets[0], tls: { secure: false } }

    let r = await call('POST', '/api/v1/credentials', { name: 'mail', type: 'imap', config: imap })
    t.equal(r.status, 201)
    const cred = r.body
    await call('GET', `/api/v1/credentials/${cred.id}`)
    await call('GET', '/api/v1/credentials')
    await call('PUT', `/api/v1/credentials/${cred.id}`, { config: { ...imap, password: '********', username: 'x' } })
    await call('PUT', `/api/v1/credentials/${cred.id}`, { config: { ...imap, password: secrets[1] } })
    await call('PUT', `/api/v1/credentials/${cred.id}`, { config: { ...imap, password: secrets[1], port: 'nope' } })
    await call('PUT', `/api/v1/credentials/${cred.id}`, { config: { ...imap, password: secrets[1], extra: secrets[1] } })
    await call('PUT', `/api/v1/credentials/${cred.id}`, { config: { ...imap, password: secrets[1] } }, { 'if-match': '"99"' })
    await call('PUT', `/api/v1/credentials/${cred.id}`, { type: 'http_bearer', config: { token: '********' } })
    await call('POST', '/api/v1/credentials/validate', { type: 'imap', config: { ...imap, password: secrets[1] } })
    await call('POST', '/api/v1/credentials/validate', { type: 'imap', config: { ...imap, password: secrets[1], host: 'bad host' } })
    await call('POST', '/api/v1/credentials', { name: 'b', type: 'http_bearer', config: { token: secrets[2] } })
    await call('POST', '/api/v1/credentials', { name: 'k', type: 'kafka', config: { brokers: ['127.0.0.1:1'], sasl: { mechanism: 'plain', username: 'u', password: secrets[3] } } })
    await call('POST', '/api/v1/credentials', { name: 'bad', type: 'kafka', config: { brokers: 'x', sasl: { mechanism: 'nope', username: 'u', password: secrets[3] } } })
    await call('POST', '/api/v1/credentials', { name: 'basic', type: 'http_basic', config: { username: 'a:b', password: secrets[4] } })
    await call('POST', '/api/v1/credentials', `{"name":"broken","type":"imap","config":{"password":"${secrets[4]}"`)
    t.equal((await m.call('POST', '/api/v1/credentials', { role: 'editor', body: { name: 'x', type: 'http_bearer', config: { token: secrets[2] } } })).status, 403)

    const cl = (await call('POST', '/api/v1/clients', { name: 'acme' })).body
    const P = `/api/v1/clients/${cl.id}/profiles`
    const key = (await call('POST', P, { name: 'k', auth_type: 'api_key' })).body
    const rotated = (await call('POST', `${P}/${key.id}/rotate`)).body
    const jwt = (await call('PUT', `${P}/${key.id}/auth-type`, { auth_type: 'jwt' })).body
    const profileSecrets = [key.credentials.api_key, rotated.credentials.api_key, jwt.credentials.jwt_secret]
    await call('GET', `${P}/${key.id}`)
    await call('GET', P)
    await call('PUT', `${P}/${key.id}`, { name: 'renamed' })
    const material = await m.call('GET', `${P}/${key.id}/credentials`)
    t.equal(material.body.jwt_secret, jwt.credentials.jwt_secret, 'the credentials route shows the material to an admin')
    for (const role of ['viewer', 'editor'] as const) {
      const r = await m.call('GET', `${P}/${key.id}/credentials`, { role })
      t.match(r.body, { jwt_secret: '********', masked: true }, `and the mask to an ${role}`)
      answers.push(JSON.stringify(r.body))
    }

    // The first answers (create, rotate, auth-type) carry the new material once, by design; no other answer does.
    const others = answers.filter(a => !a.includes('"credentials":{'))
    for (const s of [...secrets, ...profileSecrets]) {
      t.notOk(log.includes(s), `not in the log: ${s.slice(0, 6)}…`)
      t.notOk(JSON.stringify(m.events).includes(s), 'not in an event')
      t.notOk(others.some(a => a.includes(s)), 'not in any other answer')
    }
    t.ok(log.includes('management request'), 'the log did record the requests')
    const { rows } = await m.store.query('SELECT config::text AS c FROM credentials')
    for (const s of secrets) t.notOk(rows.some((x: any) => x.c.includes(s)), 'not stored in clear')
  })
}
