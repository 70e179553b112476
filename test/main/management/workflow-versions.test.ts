import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

const flow = (status: number) => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'r', name: 'reply', type: 'response_node', settings: { status, body: 'v' } }
  ],
  edges: [{ id: 'e', source: 'trg', target: 'r' }]
})

for (const kind of STORE_KINDS) {
  t.test(`workflow versions (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'v', base_path: '/v', upstream_url: 'http://127.0.0.1:9' } })).body
    const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['POST'], path: '/p' } })).body
    const wid = p.workflow_id
    const base = `/api/v1/workflows/${wid}/versions`

    let r = await m.call('GET', base, { role: 'viewer' })
    t.same(r.body, { items: [], next_cursor: null }, 'no versions before the first save')

    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { role: 'editor', body: { workflow: flow(201) } })
    t.equal(r.body.version_number, 1)
    t.type(r.body.version_id, 'string')
    await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { role: 'editor', body: { enabled: true } })
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { role: 'editor', body: { workflow: flow(202) } })
    t.equal(r.body.version_number, 3, 'every save is a version, toggles included')
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: { nodes: [], edges: [] } } })
    t.equal(r.status, 400)

    r = await m.call('GET', base, { role: 'viewer' })
    t.equal(r.status, 200)
    t.same(r.body.items.map((v: any) => v.number), [3, 2, 1], 'newest first; a refused save adds none')
    t.match(r.body.items[0], { workflow_id: wid, proxy_id: p.id, enabled: true, actor_sub: 'editor-user', restored_from: null, definition: { nodes: [{}, { settings: { status: 202 } }] } })
    t.match(r.body.items[2], { enabled: false, definition: { nodes: [{}, { settings: { status: 201 } }] } })
    for (const k of ['id', 'created_at', 'updated_at']) t.type(r.body.items[0][k], 'string')
    const first = r.body.items[2]

    // paging
    r = await m.call('GET', `${base}?limit=2`, { role: 'viewer' })
    t.same(r.body.items.map((v: any) => v.number), [3, 2])
    t.type(r.body.next_cursor, 'string')
    r = await m.call('GET', `${base}?limit=2&cursor=${r.body.next_cursor as string}`, { role: 'viewer' })
    t.same(r.body.items.map((v: any) => v.number), [1])
    t.equal(r.body.next_cursor, null)
    t.equal((await m.call('GET', `${base}?limit=0`)).status, 400)

    // restore: editor only; a new version and a proxy_workflow event; the enabled flag stays
    t.equal((await m.call('POST', `${base}/${first.id as string}/restore`, { role: 'viewer' })).status, 403)
    m.events.length = 0
    r = await m.call('POST', `${base}/${first.id as string}/restore`, { role: 'editor' })
    t.equal(r.status, 200)
    t.match(r.body, { proxy_id: p.id, workflow_id: wid, workflow_enabled: true, version_number: 4, restored_from: { id: first.id, number: 1 }, workflow: { nodes: [{}, { settings: { status: 201 } }] } })
    t.same(m.events, [{ resource_kind: 'proxy_workflow', proxy_id: p.id, definition_changed: true, enabled_changed: false, workflow_enabled: true, actor_sub: 'editor-user' }])
    t.match((await m.call('GET', `/api/v1/proxies/${p.id}/workflow`)).body, { version_number: 4, workflow: { nodes: [{}, { settings: { status: 201 } }] } })
    r = await m.call('GET', `${base}/${r.body.version_id as string}`, { role: 'viewer' })
    t.match(r.body, { number: 4, restored_from: first.id })

    // a version that cannot run enabled is refused while the workflow is enabled
    await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: false } })
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: { nodes: [], edges: [] } } })
    const empty = r.body.version_id
    await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: flow(200), enabled: true } })
    m.events.length = 0
    r = await m.call('POST', `${base}/${empty as string}/restore`)
    t.equal(r.status, 400)
    t.match(r.body.error, { code: 'validation_failed', message: /exactly one entry trigger/ })
    t.equal(m.events.length, 0)

    // unknown ids
    t.equal((await m.call('GET', '/api/v1/workflows/nope/versions')).status, 404)
    r = await m.call('POST', `${base}/nope/restore`)
    t.equal(r.status, 404)
    t.match(r.body.error.message, /Version 'nope'/)
    const other = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'q', methods: ['GET'], path: '/q' } })).body
    t.equal((await m.call('POST', `/api/v1/workflows/${other.workflow_id as string}/versions/${first.id as string}/restore`)).status, 404, 'a version of another workflow is not found')

    // deleting the proxy removes its history
    await m.call('DELETE', `/api/v1/proxies/${p.id}`)
    t.equal((await m.call('GET', base)).status, 404)
    t.equal((await m.store.query('SELECT count(*)::int AS n FROM workflow_versions WHERE workflow_id = $1', [wid])).rows[0].n, 0)
  })
}
