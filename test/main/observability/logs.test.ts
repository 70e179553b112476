/**
 * What an operator reads in the log of a real run: one access line per
 * management request (who, which route, status, duration), and a warn line
 * with the reason for every 502, 504 and failed workflow run.
 */
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase } from '../../helpers/db.js'
import { eventually, recordingLogger } from '../cache/shared.js'

async function service (t: Test, env: Record<string, string> = {}) {
  const { logger, lines } = recordingLogger()
  const svc: Service = await start(loadConfig({
    DATABASE_URL: await createTestDatabase(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', DATA_DIR: await createTempDir(t), WORKERS: '1', ...env
  }), { logger })
  t.teardown(async () => { await svc.close() })
  const token = await svc.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown, bearer = token) => {
    const r = await fetch(`http://127.0.0.1:${svc.managementPort}${path}`, {
      method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await r.text()
    return { status: r.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  return { svc, lines, api }
}

t.test('one info line per management request: sub, route, status, duration', async t => {
  const { lines, api } = await service(t)
  t.equal((await api('POST', '/api/v1/collections', { name: 'billing', base_path: '/billing', upstream_url: 'http://127.0.0.1:9' })).status, 201)
  t.equal((await api('GET', '/api/v1/collections/nope')).status, 404)
  t.equal((await api('GET', '/api/v1/collections', undefined, 'not-a-token')).status, 401)
  t.equal((await api('GET', '/livez')).status, 200)
  const access = () => lines.filter(l => l.msg === 'management request')
  t.ok(await eventually(() => access().length >= 3), 'three access lines')
  const [created, missing, refused] = access()
  t.match(created, { level: 30, sub: 'alice', method: 'POST', route: '/api/v1/collections', path: '/api/v1/collections', status: 201, ms: Number })
  t.match(missing, { sub: 'alice', method: 'GET', route: '/api/v1/collections/:id', path: '/api/v1/collections/nope', status: 404 })
  t.match(refused, { sub: null, route: '/api/v1/collections', status: 401 })
  t.notOk(access().some(l => l.path === '/livez'), 'probes are not logged at info')
})
