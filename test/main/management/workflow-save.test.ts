import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

const def = (triggers: string[]) => ({
  nodes: [
    ...triggers.map((type, i) => ({ id: `t${i}`, name: `trigger${i}`, type, settings: type === 'cron_trigger' ? { cron_expression: '*/5 * * * *' } : {} })),
    { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: 'ok' } }
  ],
  edges: triggers.map((_, i) => ({ id: `e${i}`, source: `t${i}`, target: 'r' }))
})

for (const kind of STORE_KINDS) {
  t.test(`saving workflows (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'w', base_path: '/w', upstream_url: 'http://127.0.0.1:9' } })).body
    const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['POST'], path: '/p' } })).body
    m.events.length = 0

    let r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { role: 'viewer', body: { enabled: true } })
    t.equal(r.status, 403, 'viewers cannot edit workflows')

    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { role: 'editor', body: { enabled: true } })
    t.equal(r.status, 200, 'enabling with no definition seeds a default instead of failing')
    t.equal(r.body.workflow_enabled, true)
    t.same(r.body.workflow.nodes.map((n: any) => n.type), ['http_trigger', 'response_node'])
    t.match(m.events.at(-1), { resource_kind: 'proxy_workflow', proxy_id: p.id, definition_changed: true, enabled_changed: true, workflow_enabled: true, actor_sub: 'editor-user' })

    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: def(['http_trigger', 'manual_trigger']) } })
    t.equal(r.status, 400, 'two triggers on an enabled workflow are refused')
    t.equal(r.body.error.code, 'validation_failed')
    t.match(r.body.error.message, /exactly one entry trigger/)
    t.match(r.body.error.details[0], { node_id: 't1', field: 'type' })
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: def([]) } })
    t.equal(r.status, 400, 'no trigger is refused too')
    t.equal((await m.call('GET', `/api/v1/proxies/${p.id}`)).body.workflow.nodes.length, 2, 'a refused save changes nothing')
    t.equal(m.events.length, 1, 'a refused save emits nothing')

    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: false } })
    t.equal(r.status, 200)
    t.match(m.events.at(-1), { definition_changed: false, enabled_changed: true, workflow_enabled: false })
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: def([]) } })
    t.equal(r.status, 200, 'a disabled workflow can be saved while incomplete')
    t.match(m.events.at(-1), { definition_changed: true, enabled_changed: false, workflow_enabled: false })
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: true } })
    t.equal(r.status, 400, 'and cannot be enabled until it has its trigger')

    r = await m.call('POST', `/api/v1/proxies/${p.id}/workflow/validate`, { body: { workflow: def(['cron_trigger']) } })
    t.same(r.body, { valid: true, errors: [], warnings: [], status_rules: [] })
    r = await m.call('POST', `/api/v1/proxies/${p.id}/workflow/validate`, { body: { workflow: { nodes: [{ id: 'a', name: 'a', type: 'teleport' }], edges: [{ source: 'a', target: 'zz' }] } } })
    t.equal(r.body.valid, false)
    t.ok(r.body.errors.length > 0)
    const n = m.events.length
    r = await m.call('GET', `/api/v1/proxies/${p.id}/workflow`, { role: 'editor' })
    t.equal(r.status, 200)
    t.equal((await m.call('GET', `/api/v1/proxies/${p.id}/workflow`, { role: 'viewer' })).status, 404, 'a draft\'s workflow is not shown to a viewer')
    t.equal(m.events.length, n, 'validation and reads emit nothing')
    r = await m.call('PUT', '/api/v1/proxies/missing/workflow', { body: { enabled: true } })
    t.equal(r.status, 404)
  })
}

t.test('what GET answers can be sent back: read-only fields are ignored, workflow_enabled is an alias of enabled', async t => {
  const m = await startManagement(t)
  const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'rt', base_path: '/rt', upstream_url: 'http://127.0.0.1:9' } })).body
  const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['GET'], path: '/p' } })).body
  let r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: true } })
  t.equal(r.status, 200)
  const read = (await m.call('GET', `/api/v1/proxies/${p.id}/workflow`)).body
  t.equal(read.workflow_enabled, true)
  read.workflow.nodes[1].settings.status = 201
  read.workflow_enabled = false
  r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: read })
  t.equal(r.status, 200, 'the GET answer, edited, is accepted as it is')
  t.equal(r.body.workflow.nodes[1].settings.status, 201)
  t.equal(r.body.workflow_enabled, false, 'workflow_enabled is honoured')
  t.match(m.events.at(-1), { resource_kind: 'proxy_workflow', definition_changed: true, enabled_changed: true, workflow_enabled: false })
  const before = m.events.length
  r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: true, workflow_enabled: false } })
  t.equal(r.status, 400, 'contradicting flags are refused')
  t.match(r.body.error.message, /disagree/)
  r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { enabled: true, colour: 'red' } })
  t.equal(r.status, 400, 'unknown fields are still refused')
  t.equal(m.events.length, before, 'refused saves emit nothing')
  t.equal((await m.call('GET', `/api/v1/proxies/${p.id}/workflow`)).body.workflow_enabled, false)
})

t.test('pinned_outputs sent with a save are accepted and not persisted (spec: not persisted on save)', async t => {
  const m = await startManagement(t)
  const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'pin', base_path: '/pin', upstream_url: 'http://127.0.0.1:9' } })).body
  const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['GET'], path: '/p' } })).body
  const workflow = def(['http_trigger'])
  let r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow, enabled: true, pinned_outputs: { t0: { request: { body: { a: 1 } } } } } })
  t.equal(r.status, 200, 'pins beside the definition are accepted')
  t.notOk('pinned_outputs' in r.body.workflow)
  r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: { ...workflow, pinned_outputs: { r: { status: 200 } } } } })
  t.equal(r.status, 200, 'pins inside the definition are accepted too')
  const read = (await m.call('GET', `/api/v1/proxies/${p.id}/workflow`)).body
  t.same(read.workflow.nodes, r.body.workflow.nodes)
  t.notOk('pinned_outputs' in read.workflow, 'and dropped')
  t.notOk('pinned_outputs' in read)
  r = await m.call('POST', `/api/v1/proxies/${p.id}/workflow/validate`, { body: { workflow: { ...workflow, pinned_outputs: {} } } })
  t.equal(r.body.valid, true, 'validation ignores them as well')
})
