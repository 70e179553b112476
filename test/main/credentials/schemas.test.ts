import t from 'tap'
import { validateCredentialInput } from '../../../src/main/credentials/schemas.js'
import { CREDENTIAL_TYPES, SECRET_MASK } from '../../../src/main/credentials/types.js'

const PASSWORD = 'Sup3r-Secret-Value!'

const valid = () => ({
  imap: { host: 'mail.example.test', username: 'alice', password: PASSWORD },
  kafka: { brokers: ['k1.example.test:9092'], sasl: { mechanism: 'scram-sha-256', username: 'svc', password: PASSWORD } },
  http_basic: { username: 'alice', password: PASSWORD },
  http_bearer: { token: PASSWORD },
  http_header: { name: 'X-Api-Key', value: PASSWORD },
  oauth2_client_credentials: { token_url: 'https://idp.example.test/token', client_id: 'gh', client_secret: PASSWORD, scope: 'read' }
})

t.test('a valid config of every type passes', async t => {
  const configs = valid()
  for (const type of CREDENTIAL_TYPES) t.same(validateCredentialInput(type, configs[type]), [], type)
})

t.test('imap defaults: implicit TLS on 993, certificates checked, INBOX', async t => {
  const c: Record<string, unknown> = valid().imap
  t.same(validateCredentialInput('imap', c), [])
  t.same(c, { host: 'mail.example.test', username: 'alice', password: PASSWORD, port: 993, tls: { secure: true, reject_unauthorized: true }, mailbox: 'INBOX' })
  const plain: Record<string, unknown> = { ...valid().imap, tls: { secure: false } }
  t.same(validateCredentialInput('imap', plain), [])
  t.equal(plain.port, 143, 'STARTTLS or cleartext port by default')
  const kafka: Record<string, unknown> = { brokers: ['127.0.0.1:9092'] }
  t.same(validateCredentialInput('kafka', kafka), [])
  t.same(kafka, { brokers: ['127.0.0.1:9092'], client_id: 'gatehouse', ssl: false })
})

t.test('each problem is one detail naming the field', async t => {
  const fields = (type: string, config: unknown) => validateCredentialInput(type, config).map(d => d.field).sort()
  t.same(validateCredentialInput('smtp', {}), [{ field: 'type', message: 'must be one of: imap, kafka, http_basic, http_bearer, http_header, oauth2_client_credentials' }])
  t.same(fields('imap', null), ['config'])
  t.same(fields('imap', []), ['config'])
  t.same(fields('imap', {}), ['config.host', 'config.password', 'config.username'])
  t.same(fields('imap', { ...valid().imap, port: 70000, tls: { secure: 'yes' }, extra: 1 }), ['config.extra', 'config.port', 'config.tls.secure'])
  t.same(fields('imap', { ...valid().imap, tls: { secure: true, starttls: true } }), ['config.tls.starttls'])
  t.same(fields('kafka', { brokers: [] }), ['config.brokers'])
  t.same(fields('kafka', { brokers: ['no-port'], sasl: { mechanism: 'gssapi', username: 'u' } }), ['config.brokers[0]', 'config.sasl.mechanism', 'config.sasl.password'])
  t.same(fields('http_basic', { username: 'a:b', password: '' }), ['config.password', 'config.username'])
  t.same(fields('http_header', { name: 'Bad Header', value: 'a\r\nInjected: 1' }), ['config.name', 'config.value'])
  t.same(fields('oauth2_client_credentials', { token_url: 'ftp://x', client_id: 'c', client_secret: 's' }), ['config.token_url'])
  const d = validateCredentialInput('imap', { username: 'alice', password: PASSWORD })
  t.same(d, [{ field: 'config.host', message: 'is required' }])
})

t.test('the mask is refused as a secret value (it only means "keep" on update)', async t => {
  t.same(validateCredentialInput('http_bearer', { token: SECRET_MASK }).map(d => d.field), ['config.token'])
  t.same(validateCredentialInput('kafka', { brokers: ['k:1'], sasl: { mechanism: 'plain', username: 'u', password: SECRET_MASK } }).map(d => d.field), ['config.sasl.password'])
})

t.test('no validation message quotes a secret, whatever is wrong with it', async t => {
  const bad = [
    ['imap', { ...valid().imap, host: PASSWORD + ' with space', port: PASSWORD }],
    ['http_header', { name: PASSWORD + ' x', value: PASSWORD + '\n' }],
    ['http_basic', { username: PASSWORD + ':x', password: PASSWORD }],
    ['oauth2_client_credentials', { token_url: PASSWORD, client_id: 'c', client_secret: PASSWORD.repeat(1000) }],
    ['kafka', { brokers: [PASSWORD], sasl: { mechanism: PASSWORD, username: 'u', password: 42 } }]
  ] as const
  for (const [type, config] of bad) {
    const details = validateCredentialInput(type, structuredClone(config))
    t.ok(details.length > 0, `${type} is refused`)
    for (const d of details) t.notMatch(JSON.stringify(d.message), 'Sup3r-Secret', `${type}: ${d.message}`)
  }
})
