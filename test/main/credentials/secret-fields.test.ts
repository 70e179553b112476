import t from 'tap'
import { randomBytes } from 'node:crypto'
import { maskConfig, mergeForUpdate, openConfig, sealConfig } from '../../../src/main/credentials/secret-fields.js'
import { SecretDecryptError, isSealed } from '../../../src/main/credentials/secrets.js'
import { SECRET_MASK } from '../../../src/main/credentials/types.js'

const PASSWORD = 'Sup3r-Secret-Value!'
const imap = () => ({ host: 'mail.example.test', port: 993, username: 'alice', password: PASSWORD, tls: { secure: true, reject_unauthorized: true }, mailbox: 'INBOX' })
const kafka = () => ({ brokers: ['k:9092'], client_id: 'gh', ssl: true, sasl: { mechanism: 'plain', username: 'svc', password: PASSWORD } })

t.test('masking replaces only the secret fields, and only where set', async t => {
  const plain = imap()
  t.same(maskConfig('imap', plain), { ...imap(), password: SECRET_MASK })
  t.equal(plain.password, PASSWORD, 'the input is untouched')
  t.same(maskConfig('kafka', kafka()).sasl, { mechanism: 'plain', username: 'svc', password: SECRET_MASK })
  t.same(maskConfig('kafka', { brokers: ['k:1'] }), { brokers: ['k:1'] }, 'no sasl, nothing to mask')
  t.same(maskConfig('http_bearer', { token: 't' }), { token: SECRET_MASK })
  t.same(maskConfig('http_header', { name: 'X-Key', value: 'v' }), { name: 'X-Key', value: SECRET_MASK })
  t.same(maskConfig('http_basic', { username: 'u', password: 'p' }), { username: 'u', password: SECRET_MASK })
  t.same(maskConfig('oauth2_client_credentials', { token_url: 'https://x', client_id: 'c', client_secret: 's' }).client_secret, SECRET_MASK)
  t.notMatch(JSON.stringify(maskConfig('imap', plain)), PASSWORD)
})

t.test('an update sending the mask keeps the stored secret; anything else replaces it', async t => {
  const stored = imap()
  const kept = mergeForUpdate('imap', stored, { ...imap(), host: 'new.example.test', password: SECRET_MASK })
  t.equal(kept.password, PASSWORD)
  t.equal(kept.host, 'new.example.test', 'other fields come from the update')
  t.equal(mergeForUpdate('imap', stored, { ...imap(), password: 'n3w' }).password, 'n3w')
  t.notOk('password' in mergeForUpdate('imap', stored, { host: 'h', username: 'u' }), 'a secret left out is removed')
  t.same(mergeForUpdate('kafka', kafka(), { ...kafka(), sasl: { mechanism: 'scram-sha-512', username: 'svc2', password: SECRET_MASK } }).sasl,
    { mechanism: 'scram-sha-512', username: 'svc2', password: PASSWORD })
  const orphan = mergeForUpdate('kafka', { brokers: ['k:1'] }, kafka())
  t.equal((orphan.sasl as Record<string, unknown>).password, PASSWORD, 'a real new secret is taken as is')
  const maskOnly = mergeForUpdate('kafka', { brokers: ['k:1'] }, { ...kafka(), sasl: { ...kafka().sasl, password: SECRET_MASK } })
  t.notOk('password' in (maskOnly.sasl as object), 'a mask with nothing stored is dropped, so validation reports it missing')
})

t.test('sealing encrypts only secret fields and opens back to the same config', async t => {
  const key = randomBytes(32)
  const sealed = sealConfig(key, 'kafka', kafka())
  t.ok(isSealed((sealed.sasl as Record<string, unknown>).password))
  t.same({ ...sealed, sasl: { ...(sealed.sasl as object), password: 'x' } }, { ...kafka(), sasl: { ...kafka().sasl, password: 'x' } }, 'other fields are stored as they are')
  t.notMatch(JSON.stringify(sealed), PASSWORD)
  t.same(openConfig(key, 'kafka', sealed), kafka())
  t.same(maskConfig('kafka', sealed), maskConfig('kafka', kafka()), 'a stored config masks without the key')
  const sealedImap = sealConfig(key, 'imap', imap())
  t.same(openConfig(key, 'imap', sealedImap), imap())
  t.throws(() => openConfig(randomBytes(32), 'imap', sealedImap), SecretDecryptError)
  t.throws(() => openConfig(key, 'http_basic', { username: 'alice', password: sealedImap.password }), { code: 'secret_corrupt' },
    'a sealed value moved to another type or field does not open')
  try {
    openConfig(randomBytes(32), 'imap', sealedImap)
  } catch (err) {
    t.notMatch((err as Error).message, PASSWORD)
  }
})
