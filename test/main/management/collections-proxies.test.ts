import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

for (const kind of STORE_KINDS) {
  t.test(`collections and proxies over REST (${kind})`, async t => {
    const m = await startManagement(t, kind)

    t.test('authentication and roles', async t => {
      let r = await m.call('GET', '/api/v1/collections', { role: null })
      t.equal(r.status, 401)
      t.equal(r.body.error.code, 'unauthorized')
      t.type(r.body.error.message, 'string')
      r = await m.call('GET', '/api/v1/collections', { role: null, headers: { authorization: 'Bearer not.a.token' } })
      t.equal(r.status, 401)
      r = await m.call('GET', '/api/v1/collections', { role: 'viewer' })
      t.equal(r.status, 200)
      t.same(r.body, { items: [], next_cursor: null })
      r = await m.call('POST', '/api/v1/collections', { role: 'viewer', body: { name: 'x', base_path: '/x', upstream_url: 'http://127.0.0.1:1' } })
      t.equal(r.status, 403)
      t.equal(r.body.error.code, 'forbidden')
      t.equal(m.events.length, 0, 'a refused change emits nothing')
    })

    t.test('collection lifecycle with events', async t => {
      m.events.length = 0
      let r = await m.call('POST', '/api/v1/collections', { role: 'editor', body: { name: 'billing', base_path: '/billing', upstream_url: 'http://127.0.0.1:9000' } })
      t.equal(r.status, 201)
      const c = r.body
      t.match(c, { name: 'billing', base_path: '/billing', status: 'active', auth_required: true, headers: [], version: 1 })
      t.type(c.id, 'string')
      t.type(c.created_at, 'string')
      t.equal(r.headers.get('etag'), '"1"')
      t.match(m.events.at(-1), { resource_kind: 'collection', collection_id: c.id, operation: 'created', actor_sub: 'editor-user' })

      r = await m.call('POST', '/api/v1/collections', { body: { name: 'again', base_path: '/billing', upstream_url: 'http://127.0.0.1:9000' } })
      t.equal(r.status, 409)
      t.match(r.body.error.message, /already used by collection 'billing'/)

      r = await m.call('POST', '/api/v1/collections', { body: { name: 'bad', base_path: 'nope/', upstream_url: 'ftp://x', extra: 1 } })
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'validation_failed')
      t.ok(r.body.error.details.some((d: any) => d.field === 'extra'))
      r = await m.call('POST', '/api/v1/collections', { body: { name: 'bad', base_path: 'nope/', upstream_url: 'ftp://x' } })
      t.same(r.body.error.details.map((d: any) => d.field).sort(), ['base_path', 'upstream_url'])
      r = await m.call('POST', '/api/v1/collections', { body: '{"name":' })
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'invalid_json')
      r = await m.call('POST', '/api/v1/collections', { body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      t.equal(r.status, 415)

      r = await m.call('GET', `/api/v1/collections/${c.id}`, { role: 'viewer' })
      t.equal(r.status, 200)
      t.equal(r.headers.get('etag'), '"1"')
      r = await m.call('GET', '/api/v1/collections/nope', { role: 'viewer' })
      t.equal(r.status, 404)
      t.equal(r.body.error.code, 'not_found')

      r = await m.call('PUT', `/api/v1/collections/${c.id}`, { body: { description: 'money' }, headers: { 'if-match': '"1"' } })
      t.equal(r.status, 200)
      t.equal(r.body.version, 2)
      t.match(m.events.at(-1), { operation: 'updated', collection_id: c.id })
      const before = m.events.length
      r = await m.call('PUT', `/api/v1/collections/${c.id}`, { body: { description: 'stale' }, headers: { 'if-match': '"1"' } })
      t.equal(r.status, 412)
      t.equal(m.events.length, before, 'a rejected change emits nothing')

      r = await m.call('PUT', `/api/v1/collections/${c.id}/status`, { body: { status: 'disabled' } })
      t.equal(r.status, 200)
      t.equal(r.body.status, 'disabled')
      t.match(m.events.at(-1), { operation: 'status_changed' })
      r = await m.call('PUT', `/api/v1/collections/${c.id}/status`, { body: { status: 'paused' } })
      t.equal(r.status, 400)

      r = await m.call('PATCH', `/api/v1/collections/${c.id}`)
      t.equal(r.status, 405)
      t.match(r.headers.get('allow'), /GET/)
    })

    t.test('proxies, duplicate, bulk, cascade', async t => {
      let r = await m.call('POST', '/api/v1/collections', { body: { name: 'users', base_path: '/users-api', upstream_url: 'http://127.0.0.1:9000' } })
      const c = r.body
      m.events.length = 0
      r = await m.call('POST', '/api/v1/proxies', { role: 'editor', body: { collection_id: c.id, name: 'get-user', methods: ['GET'], path: '/users/{id}', target_path: '/v2/users/{id}' } })
      t.equal(r.status, 201)
      const p = r.body
      t.match(p, { status: 'draft', streaming: false, workflow_enabled: false, workflow: null, methods: ['GET'], max_body_bytes: null })
      t.type(p.workflow_id, 'string')
      t.match(m.events.at(-1), { resource_kind: 'proxy', proxy_id: p.id, collection_id: c.id, operation: 'created' })
      r = await m.call('PUT', `/api/v1/proxies/${p.id}`, { body: { max_body_bytes: 0 } })
      t.equal(r.status, 400, 'a body limit must be positive')
      r = await m.call('PUT', `/api/v1/proxies/${p.id}`, { body: { max_body_bytes: 4096 } })
      t.equal(r.body.max_body_bytes, 4096)
      r = await m.call('GET', `/api/v1/proxies/${p.id}`)
      t.equal(r.body.max_body_bytes, 4096, 'the per-proxy body limit is stored')
      m.events.length = 0

      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'dup', methods: ['GET'], path: '/users/{uid}', target_path: '/x/{uid}' } })
      t.equal(r.status, 409)
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'bad', methods: ['GET', 'TRACE'], path: '/a/*/b', target_path: '/t/{nope}' } })
      t.equal(r.status, 400)
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'bad', methods: ['GET'], path: '/a/*/b', target_path: '/t/{nope}' } })
      t.equal(r.status, 400)
      t.same(r.body.error.details.map((d: any) => d.field), ['path'])
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'bad', methods: ['GET'], path: '/a/{x}', target_path: '/t/{nope}' } })
      t.same(r.body.error.details.map((d: any) => d.field), ['target_path'])
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: 'missing', name: 'x', methods: ['GET'], path: '/x', target_path: '/x' } })
      t.equal(r.status, 404)
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'files', methods: ['GET', 'PUT'], path: '/files/*', target_path: '/storage/*', request_schema: { type: 'nope' } } })
      t.equal(r.status, 400)
      t.equal(r.body.error.details[0].field, 'request_schema')
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'files', methods: ['GET', 'PUT'], path: '/files/*', target_path: '/storage/*' } })
      t.equal(r.status, 201)
      const files = r.body

      r = await m.call('PUT', `/api/v1/proxies/${p.id}`, { role: 'editor', body: { status: 'published' } })
      t.equal(r.status, 200)
      t.equal(r.body.status, 'published')
      t.match(m.events.at(-1), { operation: 'updated', proxy_id: p.id })

      // files is a draft: an editor pages through both, a viewer sees the published one only.
      r = await m.call('GET', `/api/v1/proxies?collection_id=${c.id}&limit=1`, { role: 'editor' })
      t.equal(r.body.items.length, 1)
      t.type(r.body.next_cursor, 'string')
      r = await m.call('GET', `/api/v1/proxies?collection_id=${c.id}&limit=1&cursor=${r.body.next_cursor}`, { role: 'editor' })
      t.equal(r.body.items[0].id, files.id)
      r = await m.call('GET', `/api/v1/proxies?collection_id=${c.id}`, { role: 'viewer' })
      t.same(r.body.items.map((x: any) => x.id), [p.id])
      r = await m.call('GET', '/api/v1/proxies?limit=9999', { role: 'viewer' })
      t.equal(r.status, 400)

      r = await m.call('POST', `/api/v1/proxies/${p.id}/duplicate`, { body: {} })
      t.equal(r.status, 201)
      t.equal(r.body.status, 'draft')
      t.equal(r.body.collection_id, c.id)
      const copy = r.body
      r = await m.call('POST', '/api/v1/collections', { body: { name: 'other', base_path: '/other', upstream_url: 'http://127.0.0.1:9000' } })
      const other = r.body
      r = await m.call('POST', `/api/v1/proxies/${p.id}/duplicate`, { body: { collection_id: other.id, name: 'moved' } })
      t.equal(r.status, 201)
      t.equal(r.body.collection_id, other.id)

      r = await m.call('POST', '/api/v1/proxies/bulk', { body: { action: 'publish', ids: [files.id, copy.id, 'ghost'] } })
      t.equal(r.status, 200)
      t.equal(r.body.succeeded, 1)
      t.same(r.body.results.map((x: any) => x.ok), [true, false, false])
      t.equal(r.body.results[1].error.code, 'conflict')
      t.equal(r.body.results[2].error.code, 'not_found')
      r = await m.call('POST', '/api/v1/proxies/bulk', { body: { action: 'delete', ids: [copy.id] } })
      t.equal(r.body.succeeded, 1)
      t.match(m.events.at(-1), { operation: 'deleted', proxy_id: copy.id })

      r = await m.call('POST', `/api/v1/collections/${c.id}/duplicate`, { body: { name: 'users v2', base_path: '/users-v2' } })
      t.equal(r.status, 201)
      t.equal(r.body.base_path, '/users-v2')
      t.equal(r.body.related_collection_id, r.body.id)
      t.match(m.events.at(-1), { resource_kind: 'collection', operation: 'duplicated', collection_id: c.id, related_collection_id: r.body.id })
      r = await m.call('GET', `/api/v1/proxies?collection_id=${r.body.id}`, { role: 'editor' })
      t.equal(r.body.items.length, 2)
      t.ok(r.body.items.every((x: any) => x.status === 'draft'))

      r = await m.call('DELETE', `/api/v1/proxies/${files.id}`, { role: 'viewer' })
      t.equal(r.status, 403)
      r = await m.call('DELETE', `/api/v1/collections/${c.id}`)
      t.equal(r.status, 204)
      t.match(m.events.at(-1), { resource_kind: 'collection', operation: 'deleted', collection_id: c.id })
      r = await m.call('GET', `/api/v1/proxies/${p.id}`, { role: 'viewer' })
      t.equal(r.status, 404, 'deleting a collection deletes its proxies')
    })

    t.test('probes and auth config are public', async t => {
      let r = await m.call('GET', '/livez', { role: null })
      t.same(r.body, { status: 'ok' })
      r = await m.call('GET', '/readyz', { role: null })
      t.equal(r.status, 200)
      r = await m.call('GET', '/api/v1/auth/config', { role: null })
      t.equal(r.body.local_issuer, true)
      const before = m.events.length
      await m.call('GET', '/api/v1/collections', { role: 'viewer' })
      t.equal(m.events.length, before, 'reads emit nothing')
    })
  })
}
