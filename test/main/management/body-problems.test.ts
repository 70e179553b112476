/** A body with several mistakes gets them all in one answer, each with its field; no phantom problem for a field never sent. */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('every problem of a body at once', async t => {
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const send = async (method: string, p: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  const fields = (r: { body: any }) => (r.body.error.details as Array<{ field: string }>).map(d => d.field).sort()

  let r = await send('POST', '/collections', { name: '', base_path: 'x', upstream_url: 'ftp://a', bogus: 1 })
  t.equal(r.status, 400)
  t.same(fields(r), ['base_path', 'bogus', 'name', 'upstream_url'], 'schema problems and field rules in one answer')
  t.match(r.body.error.message, /base_path must start with '\/'/)

  const c = await send('POST', '/collections', { name: 'x', base_path: '/x', upstream_url: 'http://127.0.0.1:9' })
  t.equal(c.status, 201)
  r = await send('POST', '/proxies', { collection_id: c.body.id, path: 'items', methods: ['FETCH'], timeout_ms: -1 })
  t.same(fields(r), ['methods[0]', 'name', 'path', 'timeout_ms'])
  t.notOk(fields(r).includes('target_path'), 'target_path was not sent: not reported')
  r = await send('POST', '/proxies', { collection_id: c.body.id, name: 'p', methods: ['GET'], path: '/items/{id}', target_path: '/v2/{sku}' })
  t.match(r.body.error.details, [{ field: 'target_path', message: /\{sku\}/ }], 'a target path that was sent is checked against the path')
  r = await send('PUT', `/collections/${c.body.id}`, { base_path: 'nope', auth_required: 'yes' })
  t.same(fields(r), ['auth_required', 'base_path'])
})
