/** A start whose SECRETS_KEY cannot open the stored secrets stops with a line that says so, instead of serving with unreadable credentials. */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('wrong SECRETS_KEY', async t => {
  const dataDir = await createTempDir(t)
  const conf = (key: string) => loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: dataDir, DATABASE_URL: '', SECRETS_KEY: key })
  const k1 = Buffer.alloc(32, 1).toString('base64')
  const k2 = Buffer.alloc(32, 2).toString('base64')
  const a = await start(conf(k1), { logger: silentLogger })
  const token = await a.issueToken!('alice', 'admin')
  const api = async (p: string, body: unknown) => await (await fetch(`http://127.0.0.1:${a.managementPort}/api/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as any
  const cl = await api('/clients', { name: 'acme' })
  const prof = await api(`/clients/${cl.id}/profiles`, { name: 'k', auth_type: 'api_key' })
  t.match(prof.credentials.api_key, /^gh_/)
  await a.close()

  await t.rejects(start(conf(k2), { logger: silentLogger }), { message: /sealed with another key.*set SECRETS_KEY to the key they were made with/ })
  const again = await start(conf(k1), { logger: silentLogger })
  t.pass('the right key starts')
  await again.close()
})
