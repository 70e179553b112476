/**
 * A workflow save answers warnings for references that will resolve to nothing (the save stands),
 * and drafts are visible to the roles that can change them (editor, admin), not to viewers.
 */
import t from 'tap'
import { startManagement } from '../../helpers/management.js'

const workflow = {
  nodes: [
    { id: 't', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'f', name: 'fetch', type: 'http_request_node', settings: { method: 'GET', url: 'http://127.0.0.1:9/x' } },
    { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: { type: 'json', content: '{"s": {{fetch.response.status}}, "a": {{fetch.respone.status}}, "b": {{nosuch.output}}, "c": {{$node[\'ghost\'].x}}, "d": {{ $json[\'zz\'] }}, "e": {{ Math.max(trigger.params.n, 1) }} }' } } }
  ],
  edges: [{ source: 't', target: 'f' }, { source: 'f', target: 'r' }]
}

t.test('save and validate answer warnings for references that resolve to nothing', async t => {
  const m = await startManagement(t)
  const c = await m.call('POST', '/api/v1/collections', { body: { name: 'w', base_path: '/w', upstream_url: 'http://127.0.0.1:9/', auth_required: false } })
  const p = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'p', methods: ['GET'], path: '/p/{n}' } })
  const saved = await m.call('PUT', `/api/v1/proxies/${p.body.id}/workflow`, { body: { workflow, enabled: true } })
  t.equal(saved.status, 200, 'the save stands')
  t.same(saved.body.warnings.map((w: { message: string }) => w.message), [
    "{{fetch.respone.status}}: a http_request_node has no 'respone' (it outputs response, timedOut, output): it will be empty.",
    "{{nosuch.output}} refers to 'nosuch', which is no node of this workflow: it will be empty.",
    "{{$node['ghost'].x}} refers to the node named 'ghost', which this workflow does not have: it will be empty.",
    "{{ $json['zz'] }} refers to the node id 'zz', which this workflow does not have: it will be empty."
  ])
  t.ok(saved.body.warnings.every((w: { node_id: string, field: string }) => w.node_id === 'r' && w.field === 'settings.body.content'), 'each names its node and field')

  const validated = await m.call('POST', `/api/v1/proxies/${p.body.id}/workflow/validate`, {})
  t.equal(validated.body.valid, true)
  t.equal(validated.body.warnings.length, 4)

  const clean = await m.call('PUT', `/api/v1/proxies/${p.body.id}/workflow`, { body: { workflow: { ...workflow, nodes: workflow.nodes.map(n => n.id === 'r' ? { ...n, settings: { status: 200, body: { type: 'json', content: '{{fetch.output}}' } } } : n) } } })
  t.same(clean.body.warnings, [], 'no warnings when every reference resolves')
})

t.test('drafts: editors and admins see them, viewers do not', async t => {
  const m = await startManagement(t)
  const c = await m.call('POST', '/api/v1/collections', { body: { name: 'd', base_path: '/d', upstream_url: 'http://127.0.0.1:9/', auth_required: false } })
  const draft = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'wip', methods: ['GET'], path: '/wip' } })
  const live = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'live', methods: ['GET'], path: '/live', status: 'published' } })
  for (const role of ['editor', 'admin'] as const) {
    const list = await m.call('GET', '/api/v1/proxies', { role })
    t.same(list.body.items.map((p: { name: string }) => p.name).sort(), ['live', 'wip'], `${role} lists drafts`)
    t.equal((await m.call('GET', `/api/v1/proxies/${draft.body.id}`, { role })).status, 200)
  }
  // docs/auth.md: editors see drafts because they edit and publish them (a deliberate difference from the spec).
  const edited = await m.call('PUT', `/api/v1/proxies/${draft.body.id}`, { role: 'editor', body: { description: 'still in progress' } })
  t.equal(edited.status, 200, 'an editor changes the draft it can read')
  t.equal((await m.call('GET', `/api/v1/proxies/${draft.body.id}`, { role: 'editor' })).body.description, 'still in progress')
  const list = await m.call('GET', '/api/v1/proxies', { role: 'viewer' })
  t.same(list.body.items.map((p: { name: string }) => p.name), ['live'], 'a viewer lists published proxies only')
  const byCollection = await m.call('GET', `/api/v1/proxies?collection_id=${c.body.id}`, { role: 'viewer' })
  t.same(byCollection.body.items.map((p: { name: string }) => p.name), ['live'])
  const one = await m.call('GET', `/api/v1/proxies/${draft.body.id}`, { role: 'viewer' })
  t.equal(one.status, 404, 'a draft is not found for a viewer')
  t.equal(one.body.error.code, 'not_found')
  t.equal((await m.call('GET', `/api/v1/proxies/${draft.body.id}/workflow`, { role: 'viewer' })).status, 404)
  t.equal((await m.call('GET', `/api/v1/proxies/${live.body.id}`, { role: 'viewer' })).status, 200)
  const exported = await m.call('GET', `/api/v1/collections/${c.body.id}/export`, { role: 'viewer' })
  t.same(exported.body.collections[0].proxies.map((p: { name: string }) => p.name), ['live'], 'a viewer\'s export leaves drafts out')
  const adminExport = await m.call('GET', `/api/v1/collections/${c.body.id}/export`, { role: 'admin' })
  t.equal(adminExport.body.collections[0].proxies.length, 2)
  const openapi = await m.call('GET', `/api/v1/collections/${c.body.id}/openapi?include_drafts=true`, { role: 'viewer' })
  t.same(Object.keys(openapi.body.paths), ['/live'], 'include_drafts does not show a viewer drafts')
})
