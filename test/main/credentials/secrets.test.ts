import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  KEY_FILE_NAME, SecretDecryptError, decryptSecret, encryptSecret, isSealed, loadSecretsKey
} from '../../../src/main/credentials/secrets.js'

const PASSWORD = 'correct horse battery staple ✓'

async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-secrets-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('a sealed secret opens with the same key and context', async t => {
  const key = randomBytes(32)
  const sealed = encryptSecret(key, PASSWORD, 'imap.password')
  t.match(sealed, /^v1:[0-9a-f]{8}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/)
  t.notMatch(sealed, 'horse')
  t.ok(isSealed(sealed))
  t.notOk(isSealed(PASSWORD))
  t.equal(decryptSecret(key, sealed, 'imap.password'), PASSWORD)
  t.equal(decryptSecret(key, encryptSecret(key, '')), '')
  t.not(encryptSecret(key, PASSWORD), encryptSecret(key, PASSWORD), 'a fresh IV each time')
})

t.test('a wrong key, altered data or another context is refused without the plaintext', async t => {
  const key = randomBytes(32)
  const sealed = encryptSecret(key, PASSWORD, 'imap.password')
  const refuses = (fn: () => unknown, code: string, what: string) => {
    try {
      const out = fn()
      t.fail(`${what}: opened to ${String(out).length} characters`)
    } catch (err) {
      t.ok(err instanceof SecretDecryptError, what)
      t.equal((err as SecretDecryptError).code, code, what)
      t.notMatch((err as Error).message, PASSWORD, what)
      t.notMatch((err as Error).message, key.toString('base64'), what)
    }
  }
  refuses(() => decryptSecret(randomBytes(32), sealed, 'imap.password'), 'secret_wrong_key', 'wrong key')
  const parts = sealed.split(':')
  const ct = Buffer.from(parts[4]!, 'base64')
  ct[0]! ^= 1
  refuses(() => decryptSecret(key, [...parts.slice(0, 4), ct.toString('base64')].join(':'), 'imap.password'), 'secret_corrupt', 'flipped ciphertext bit')
  const tag = Buffer.from(parts[3]!, 'base64')
  tag[3]! ^= 0x80
  refuses(() => decryptSecret(key, [...parts.slice(0, 3), tag.toString('base64'), parts[4]].join(':'), 'imap.password'), 'secret_corrupt', 'altered tag')
  refuses(() => decryptSecret(key, sealed, 'kafka.sasl.password'), 'secret_corrupt', 'other context')
  refuses(() => decryptSecret(key, PASSWORD), 'secret_corrupt', 'plaintext is not a sealed value')
  refuses(() => decryptSecret(key, 'v1:' + parts[1] + ':AAAA:BBBB:CCCC'), 'secret_corrupt', 'short IV and tag')
})

t.test('SECRETS_KEY is used when set and must be 32 bytes of base64', async t => {
  const dir = await tempDir(t)
  const raw = randomBytes(32)
  const key = await loadSecretsKey({ secretsKey: raw.toString('base64'), dataDir: dir })
  t.same(key, raw)
  await t.rejects(stat(path.join(dir, KEY_FILE_NAME)), { code: 'ENOENT' }, 'no key file is written')
  await t.rejects(loadSecretsKey({ secretsKey: randomBytes(16).toString('base64'), dataDir: dir }), /SECRETS_KEY must be the base64 encoding of exactly 32/)
  await t.rejects(loadSecretsKey({ secretsKey: 'not base64 at all!!', dataDir: dir }), /SECRETS_KEY/)
})

t.test('without SECRETS_KEY a key file is created once (0600) and reused', async t => {
  const dir = path.join(await tempDir(t), 'nested', 'data')
  const first = await loadSecretsKey({ secretsKey: '', dataDir: dir })
  t.equal(first.length, 32)
  const file = path.join(dir, KEY_FILE_NAME)
  t.equal((await stat(file)).mode & 0o777, 0o600)
  t.same(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'), first)
  const again = await loadSecretsKey({ secretsKey: '', dataDir: dir })
  t.same(again, first, 'the same key comes back after a restart')
  const sealed = encryptSecret(first, PASSWORD)
  t.equal(decryptSecret(again, sealed), PASSWORD)
  const [a, b] = await Promise.all([
    loadSecretsKey({ secretsKey: '', dataDir: path.join(dir, 'race') }),
    loadSecretsKey({ secretsKey: '', dataDir: path.join(dir, 'race') })
  ])
  t.same(a, b, 'two first uses at once agree on one key')
})

t.test('a damaged key file stops start-up with a clear message', async t => {
  const dir = await tempDir(t)
  await writeFile(path.join(dir, KEY_FILE_NAME), 'short\n')
  await t.rejects(loadSecretsKey({ secretsKey: '', dataDir: dir }), /key file .*secrets\.key must be the base64 encoding of exactly 32 random bytes/)
})
