/**
 * Sealed secrets are bound to their record: a sealed value copied into another profile does not
 * open there (a clear error, not the other profile's key), and values sealed before the binding
 * (v1) are re-sealed bound at the next start and keep working.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { decryptSecret, encryptSecret } from '../../../src/main/credentials/secrets.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('the record is part of the associated data', async t => {
  const key = Buffer.alloc(32, 9)
  const sealed = encryptSecret(key, 'gh_secret', 'profile.api_key', 'profile-a')
  t.match(sealed, /^v2:/)
  t.equal(decryptSecret(key, sealed, 'profile.api_key', 'profile-a'), 'gh_secret')
  t.throws(() => decryptSecret(key, sealed, 'profile.api_key', 'profile-b'), { code: 'secret_corrupt' }, 'another record')
  t.throws(() => decryptSecret(key, sealed, 'profile.jwt_secret', 'profile-a'), { code: 'secret_corrupt' }, 'another field')
  const legacy = encryptSecret(key, 'old', 'profile.api_key')
  t.match(legacy, /^v1:/)
  t.equal(decryptSecret(key, legacy, 'profile.api_key', 'any'), 'old', 'v1 values still open in their field')
})

t.test('a copied sealed value does not serve another profile; legacy values are re-sealed at start', async t => {
  const dataDir = await createTempDir(t)
  const key = Buffer.alloc(32, 4)
  const conf = loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: dataDir, DATABASE_URL: '', SECRETS_KEY: key.toString('base64') })
  let s = await start(conf, { logger: silentLogger })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (svc: typeof s, method: string, p: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${svc.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  const cl = (await api(s, 'POST', '/clients', { name: 'acme' })).body
  const a = (await api(s, 'POST', `/clients/${cl.id}/profiles`, { name: 'a', auth_type: 'api_key' })).body
  const b = (await api(s, 'POST', `/clients/${cl.id}/profiles`, { name: 'b', auth_type: 'api_key' })).body
  t.equal((await api(s, 'GET', `/clients/${cl.id}/profiles/${a.id}/credentials`)).body.api_key, a.credentials.api_key)

  // Someone with database access copies a's sealed key into b.
  await s.store.query('UPDATE profiles SET secret_sealed = (SELECT secret_sealed FROM profiles WHERE id = $1) WHERE id = $2', [a.id, b.id])
  const copied = await api(s, 'GET', `/clients/${cl.id}/profiles/${b.id}/credentials`)
  t.equal(copied.status, 500)
  t.match(copied.body, { error: { code: 'secret_corrupt', message: /damaged/ } }, 'a clear error, not a\'s key')
  t.notMatch(JSON.stringify(copied.body), a.credentials.api_key)

  // A value sealed the old way (field only) is re-sealed bound to its record at the next start.
  await s.store.query('UPDATE profiles SET secret_sealed = $2 WHERE id = $1', [b.id, encryptSecret(key, 'gh_legacy_value', 'profile.api_key')])
  await s.close()
  s = await start(conf, { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const { rows } = await s.store.query<{ secret_sealed: string }>('SELECT secret_sealed FROM profiles WHERE id = $1', [b.id])
  t.match(rows[0]?.secret_sealed, /^v2:/, 're-sealed as v2')
  t.equal((await api(s, 'GET', `/clients/${cl.id}/profiles/${b.id}/credentials`)).body.api_key, 'gh_legacy_value')
})
