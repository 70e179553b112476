import { readFileSync } from 'node:fs'
import t from 'tap'
import type { Logger } from '../../../src/main/logger.js'
import { createAuditTrail, describe } from '../../../src/main/management/audit-trail.js'
import { Router } from '../../../src/main/management/router.js'
import type { Store } from '../../../src/main/store/types.js'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'

const petstoreText = readFileSync(new URL('../../fixtures/openapi/petstore-3.0.json', import.meta.url), 'utf8')

t.test('kind, id and action come from the route pattern', async t => {
  const router = new Router()
  const noop = async () => ({ status: 200 })
  const cases: Array<[string, string, string, { kind: string | null, id: string | null, action: string }]> = [
    ['POST', '/api/v1/collections', '/api/v1/collections', { kind: 'collection', id: null, action: 'create' }],
    ['PUT', '/api/v1/collections/:id', '/api/v1/collections/c1', { kind: 'collection', id: 'c1', action: 'update' }],
    ['DELETE', '/api/v1/policies/:id', '/api/v1/policies/p1', { kind: 'policy', id: 'p1', action: 'delete' }],
    ['PUT', '/api/v1/collections/:id/status', '/api/v1/collections/c1/status', { kind: 'collection', id: 'c1', action: 'status_change' }],
    ['PUT', '/api/v1/policies/:id/toggle-status', '/api/v1/policies/p1/toggle-status', { kind: 'policy', id: 'p1', action: 'status_change' }],
    ['POST', '/api/v1/collections/:id/duplicate', '/api/v1/collections/c1/duplicate', { kind: 'collection', id: 'c1', action: 'duplicate' }],
    ['POST', '/api/v1/clients/:clientId/profiles/:id/rotate', '/api/v1/clients/k/profiles/p/rotate', { kind: 'profile', id: 'p', action: 'rotate' }],
    ['PUT', '/api/v1/clients/:clientId/profiles/:id/auth-type', '/api/v1/clients/k/profiles/p/auth-type', { kind: 'profile', id: 'p', action: 'auth_type' }],
    ['PUT', '/api/v1/proxies/:id/workflow', '/api/v1/proxies/x/workflow', { kind: 'proxy_workflow', id: 'x', action: 'update' }],
    ['POST', '/api/v1/collections/import/openapi', '/api/v1/collections/import/openapi', { kind: 'collection', id: null, action: 'import' }],
    ['POST', '/api/v1/workflows/:workflowId/versions/:versionId/restore', '/api/v1/workflows/w/versions/v/restore', { kind: 'workflow_version', id: 'v', action: 'restore' }],
    ['POST', '/api/v1/proxies/bulk', '/api/v1/proxies/bulk', { kind: 'proxy', id: null, action: 'bulk' }]
  ]
  for (const [method, pattern] of cases) router.add(method, pattern, noop)
  router.add('PUT', '/api/v1/copilot/thread', noop, { audit: { kind: 'assistant_thread', action: 'update' } })
  for (const [method, , path, expected] of cases) {
    const { route, params } = router.find(method, path)
    t.same(describe(route, params, method), expected, `${method} ${path}`)
  }
  const { route } = router.find('PUT', '/api/v1/copilot/thread')
  t.same(describe(route, {}, 'PUT'), { kind: 'assistant_thread', id: null, action: 'update' })
})

t.test('a failing audit write logs a warning and is not thrown', async t => {
  const warnings: unknown[] = []
  const logger = { warn: (...a: unknown[]) => warnings.push(a), info: () => {} } as unknown as Logger
  const store = { query: async () => { throw new Error('disk full') } } as unknown as Store
  const trail = createAuditTrail(store, logger)
  const entry = { actor_sub: 'a', source: 'mcp' as const, action: 'create', resource_kind: 'collection', resource_id: 'c', method: null, path: 'tools/call', status: 200, remote_addr: null }
  trail.record([entry])
  trail.record([entry])
  await trail.settled()
  t.equal(warnings.length, 1, 'one warning per outage')
  t.match(warnings[0], [{ err: 'disk full' }])
})

for (const kind of STORE_KINDS) {
  t.test(`audit log (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const list = async (query = '', role: 'viewer' | null = 'viewer') => {
      await m.server.audit.settled()
      return await m.call('GET', `/api/v1/audit-logs${query}`, { role })
    }

    t.test('changes are recorded, reads and failures are not', async t => {
      let r = await m.call('POST', '/api/v1/collections', { role: 'editor', body: { name: 'a', base_path: '/a', upstream_url: 'http://127.0.0.1:9000' } })
      const c = r.body
      await m.call('GET', `/api/v1/collections/${c.id}`)
      await m.call('POST', '/api/v1/collections', { body: { name: 'a', base_path: '/a', upstream_url: 'http://127.0.0.1:9000' } }) // 409
      await m.call('PUT', `/api/v1/collections/${c.id}`, { body: { name: 'b' } })
      await m.call('PUT', `/api/v1/collections/${c.id}/status`, { body: { status: 'disabled' } })
      const p = (await m.call('POST', '/api/v1/proxies', { role: 'editor', body: { collection_id: c.id, name: 'p', methods: ['GET'], path: '/p' } })).body
      await m.call('POST', '/api/v1/proxies/bulk', { body: { action: 'publish', ids: [p.id, 'missing'] } })
      await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: true } })
      await m.call('POST', `/api/v1/proxies/${p.id}/workflow/validate`, { body: {} })
      const dup = (await m.call('POST', `/api/v1/collections/${c.id}/duplicate`, { body: {} })).body
      await m.call('DELETE', `/api/v1/collections/${dup.related_collection_id}`)
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { document: petstoreText, upstream_url: 'https://petstore3.swagger.io/api/v3' } })
      const pets = r.body
      await m.call('PUT', '/api/v1/copilot/thread', { role: 'viewer', body: { messages: [{ role: 'user', content: 'hi' }] } })

      r = await list('?order=asc')
      t.equal(r.status, 200)
      const rows = r.body.items.map((e: any) => [e.action, e.resource_kind, e.resource_id, e.method, e.status, e.actor_sub])
      t.same(rows, [
        ['create', 'collection', c.id, 'POST', 201, 'editor-user'],
        ['update', 'collection', c.id, 'PUT', 200, 'admin-user'],
        ['status_change', 'collection', c.id, 'PUT', 200, 'admin-user'],
        ['create', 'proxy', p.id, 'POST', 201, 'editor-user'],
        ['bulk_publish', 'proxy', p.id, 'POST', 200, 'admin-user'],
        ['update', 'proxy_workflow', p.id, 'PUT', 200, 'admin-user'],
        ['duplicate', 'collection', c.id, 'POST', 201, 'admin-user'],
        ['delete', 'collection', dup.related_collection_id, 'DELETE', 204, 'admin-user'],
        ['import', 'collection', pets.id, 'POST', 201, 'editor-user'],
        ['update', 'assistant_thread', r.body.items.at(-1).resource_id, 'PUT', 200, 'viewer-user']
      ])
      const first = r.body.items[0]
      t.match(first, { source: 'rest', path: '/api/v1/collections', remote_addr: /127\.0\.0\.1/ })
      t.type(first.id, 'string')
      t.ok(Date.parse(first.occurred_at) > Date.now() - 60_000)
      t.equal(r.body.next_cursor, null)
    })

    t.test('refused requests are recorded as denied', async t => {
      const c = (await m.call('GET', '/api/v1/collections')).body.items[0]
      await m.call('GET', '/api/v1/collections', { role: null })
      await m.call('DELETE', `/api/v1/collections/${c.id}`, { role: 'viewer' })
      await m.call('GET', '/api/v1/nothing-here', { role: null }) // 404: no route, not an audit matter
      const r = await list('?action=denied&order=asc')
      t.same(r.body.items.map((e: any) => [e.actor_sub, e.resource_kind, e.resource_id, e.method, e.path, e.status]), [
        [null, 'collection', null, 'GET', '/api/v1/collections', 401],
        ['viewer-user', 'collection', c.id, 'DELETE', `/api/v1/collections/${c.id}`, 403]
      ])
    })

    t.test('filters and paging', async t => {
      const c = (await m.call('GET', '/api/v1/collections')).body.items[0]
      let r = await list(`?resource_kind=collection&resource_id=${c.id}`)
      t.same(r.body.items.map((e: any) => e.action), ['denied', 'duplicate', 'status_change', 'update', 'create'], 'newest first by default')
      r = await list('?actor_sub=editor-user&order=asc')
      t.same(r.body.items.map((e: any) => e.resource_kind), ['collection', 'proxy', 'collection'])
      m.server.audit.record([{ actor_sub: 'bot', source: 'mcp', action: 'create', resource_kind: 'policy', resource_id: 'p9', method: null, path: 'tools/call create_policy', status: 200, remote_addr: null }])
      r = await list('?source=mcp')
      t.match(r.body.items, [{ actor_sub: 'bot', source: 'mcp', resource_kind: 'policy', path: 'tools/call create_policy' }])
      t.equal(r.body.items.length, 1)

      const all = (await list('?limit=500')).body.items
      const seen: string[] = []
      let cursor = ''
      for (let i = 0; i < 20; i++) {
        r = await list(`?limit=3${cursor === '' ? '' : `&cursor=${cursor}`}`)
        t.ok(r.body.items.length <= 3)
        seen.push(...r.body.items.map((e: any) => e.id))
        if (r.body.next_cursor === null) break
        cursor = r.body.next_cursor
      }
      t.same(seen, all.map((e: any) => e.id), 'pages join up to the whole list')

      r = await list(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)
      t.same(r.body.items, [])
      r = await list(`?until=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&since=2000-01-01`)
      t.ok(r.body.items.length > 0)
      r = await list('?since=yesterday')
      t.equal(r.status, 400)
      t.equal(r.body.error.details[0].field, 'since')
      r = await list('?order=sideways&source=ftp')
      t.same(r.body.error.details.map((d: any) => d.field).sort(), ['order', 'source'])
      r = await list('?limit=0')
      t.equal(r.status, 400)
      r = await list('?cursor=zzz')
      t.equal(r.status, 400)
      r = await list('', null)
      t.equal(r.status, 401)
    })
  })
}
