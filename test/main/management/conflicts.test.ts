/** Conflicts (409) of collections, proxies and policies on both stores; every kind of request while PostgreSQL is gone. */
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'
import { fixtures, UPSTREAM } from './route-matrix.js'

for (const kind of STORE_KINDS) {
  t.test(`conflicts (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const f = await fixtures(m)
    const other = (await m.call('POST', '/api/v1/collections', { body: { name: 'o', base_path: '/o', upstream_url: UPSTREAM } })).body
    m.events.length = 0
    const conflict = async (what: string, method: string, path: string, body?: unknown) => {
      const r = await m.call(method, path, { body })
      t.equal(r.status, 409, what)
      t.equal(r.body?.error?.code, 'conflict')
      t.type(r.body?.error?.message, 'string')
    }
    await conflict('create with a taken base_path', 'POST', '/api/v1/collections', { name: 'x', base_path: '/c', upstream_url: UPSTREAM })
    await conflict('update to a taken base_path', 'PUT', `/api/v1/collections/${other.id}`, { base_path: '/c' })
    await conflict('duplicate onto a taken base_path', 'POST', `/api/v1/collections/${other.id}/duplicate`, { base_path: '/c' })
    await conflict('OpenAPI import onto a taken base_path', 'POST', '/api/v1/collections/import/openapi',
      { document: { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {} }, base_path: '/c', upstream_url: UPSTREAM })
    await conflict('a second proxy for the same path and method', 'POST', '/api/v1/proxies', { collection_id: f.coll.id, name: 'again', methods: ['GET'], path: '/p' })
    const q = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: f.coll.id, name: 'q', methods: ['GET', 'POST'], path: '/q/{id}' } })).body
    const n = m.events.length
    await conflict('a proxy moved onto a taken path and method', 'PUT', `/api/v1/proxies/${q.id}`, { path: '/p', target_path: '/p' })
    await conflict('the same path shape with another parameter name', 'POST', '/api/v1/proxies', { collection_id: f.coll.id, name: 'q2', methods: ['POST'], path: '/q/{other}' })
    await m.call('PUT', `/api/v1/clients/${f.cl.id}/profiles/${f.prof.id}`, { body: { policy_id: f.pol.id } })
    const n2 = m.events.length
    await conflict('a policy in use cannot be deleted', 'DELETE', `/api/v1/policies/${f.pol.id}`)
    t.equal(m.events.length, n2, 'conflicts emit nothing')
    t.equal(n, 1, 'only the successful proxy create emitted before')
    t.equal((await m.call('GET', `/api/v1/proxies/${q.id}`)).body.path, '/q/{id}', 'the refused move changed nothing')
  })
}

t.test('PostgreSQL gone: every kind of request answers 503, no event, the listener stays up', async t => {
  const m = await startManagement(t, 'postgres')
  const f = await fixtures(m)
  m.events.length = 0
  const pg = (await import('pg')).default
  const { ADMIN_URL } = await import('../../helpers/db.js')
  const dbName = (await m.store.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`)
  await admin.end()
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/collections'],
    ['GET', `/api/v1/policies/${f.pol.id}`],
    ['POST', '/api/v1/collections', { name: 'x', base_path: '/x', upstream_url: UPSTREAM }],
    ['PUT', `/api/v1/proxies/${f.proxy.id}`, { description: 'd' }],
    ['DELETE', `/api/v1/credentials/${f.cred.id}`],
    ['POST', `/api/v1/clients/${f.cl.id}/profiles/${f.prof.id}/rotate`],
    ['PUT', '/api/v1/copilot/thread', { messages: [] }]
  ]
  for (const [method, path, body] of calls) {
    const r = await m.call(method, path, { body })
    t.equal(r.status, 503, `${method} ${path}`)
    t.equal(r.body?.error?.code, 'service_unavailable')
    t.ok(Number(r.headers.get('retry-after')) > 0, 'with Retry-After')
  }
  t.same(m.events, [], 'a failed change emits nothing')
  t.equal((await m.call('GET', '/livez', { role: null })).status, 200, 'still alive')
})
