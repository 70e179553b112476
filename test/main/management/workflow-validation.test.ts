import t from 'tap'
import { startManagement } from '../../helpers/management.js'

const node = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const edge = (source: string, target: string, sourceHandle?: string) => ({ id: `${source}-${target}-${sourceHandle ?? ''}`, source, target, sourceHandle })

t.test('workflow validation and the node catalogue', async t => {
  const m = await startManagement(t, 'embedded')
  const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'v', base_path: '/v', upstream_url: 'http://127.0.0.1:9' } })).body
  const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['POST'], path: '/p' } })).body
  const validate = async (workflow: unknown) => (await m.call('POST', `/api/v1/proxies/${p.id}/workflow/validate`, { role: 'editor', body: { workflow } })).body

  t.test('the catalogue lists every node type with its schema and wiring hints', async t => {
    const r = await m.call('GET', '/api/v1/workflows/nodes', { role: 'viewer' })
    t.equal(r.status, 200)
    t.equal(r.body.next_cursor, null)
    const types = r.body.items.map((d: any) => d.type)
    t.same(types.slice().sort(), ['broker_consumer', 'cache_lookup_node', 'code_node', 'condition_node', 'cron_trigger', 'delay_node', 'execute_subworkflow',
      'http_request_node', 'http_trigger', 'imap_trigger', 'loop_node', 'manual_trigger', 'merge_node', 'parallel_node', 'response_node', 'set_node', 'xml_node'])
    const by = Object.fromEntries(r.body.items.map((d: any) => [d.type, d]))
    for (const d of r.body.items) {
      for (const k of ['entry_trigger', 'terminal_node', 'requires_source_handle', 'supported_source_handles', 'default_source_handle', 'dynamic_source_handles', 'wiring_hint', 'settings_schema', 'outputs']) {
        t.ok(k in d, `${d.type} has ${k}`)
      }
    }
    t.match(by.condition_node, { requires_source_handle: true, supported_source_handles: ['true', 'false'] })
    t.match(by.loop_node, { supported_source_handles: ['loop', 'done'], default_source_handle: 'loop' })
    t.match(by.cache_lookup_node, { supported_source_handles: ['hit', 'miss'] })
    t.match(by.http_trigger, { entry_trigger: true })
    t.match(by.response_node, { terminal_node: true })
    t.same(by.http_request_node.settings_schema.required, ['url'])
    t.equal((await m.call('GET', '/api/v1/workflows/nodes/loop_node', { role: 'viewer' })).body.type, 'loop_node')
    t.equal((await m.call('GET', '/api/v1/workflows/nodes/teleport', { role: 'viewer' })).status, 404)
    t.equal((await m.call('GET', '/api/v1/workflows/nodes', { role: null })).status, 401)
  })

  t.test('a complete workflow with loops, conditions and cache branches is valid', async t => {
    const r = await validate({
      nodes: [
        node('trg', 'http_trigger'),
        node('get', 'cache_lookup_node', { operation: 'get', key: 'user:{{trigger.params.id}}' }),
        node('hit', 'response_node', { status: 200, body: '{{get.value}}' }),
        node('fetch', 'http_request_node', { url: 'https://example.com/u/{{trigger.params.id}}', method: 'post', timeout_ms: '1000' }),
        node('ok', 'condition_node', { conditions: [{ left: '{{fetch.response.status}}', operator: 'equals', right: 200 }] }),
        node('each', 'loop_node', { items: '{{fetch.response.body.items}}' }),
        node('shape', 'set_node', { values: { name: "{{$json['$item'].name}}" } }),
        node('code', 'code_node', { code: 'return {{ not an expression' }),
        node('reply', 'response_node', { status: '{{ 200 + 1 }}', body: '{{each.items}}' }),
        node('fail', 'response_node', { status: 502 })
      ],
      edges: [
        edge('trg', 'get'), edge('get', 'hit', 'hit'), edge('get', 'fetch', 'miss'), edge('fetch', 'ok', 'main'),
        edge('ok', 'each', 'true'), edge('ok', 'fail', 'false'),
        edge('each', 'shape', 'loop'), edge('shape', 'code'), edge('code', 'each'), edge('each', 'reply', 'done')
      ],
      runtime_settings: { timeout_ms: 5000, max_concurrency: 2, max_queue: 10 }
    })
    t.same(r, { valid: true, errors: [], warnings: [], status_rules: [{ node_id: 'fetch', rule: 'condition', condition_node_id: 'ok', message: "Node 'fetch': a non-2xx answer is handled by condition 'ok', which reads {{fetch.response.status}}." }] })
  })

  t.test('each rule is reported with the node and field a UI can point at', async t => {
    const r = await validate({
      nodes: [
        node('trg', 'http_trigger'),
        node('fetch', 'http_request_node', { timeout_ms: 'soon', method: 'FETCH', retries: 3 }),
        node('cond', 'condition_node', { conditions: [{ left: 1, operator: 'approx', right: 2 }] }),
        node('set', 'set_node', { values: { a: '{{ 1 + }}' } }),
        node('reply', 'response_node', { status: 200 }),
        node('lonely', 'delay_node', { delay_ms: 10 }),
        node('a', 'set_node', { values: {} }),
        node('b', 'set_node', { values: {} }),
        node('cron', 'cron_trigger', { cron_expression: '61 * * * *' })
      ],
      edges: [
        edge('trg', 'fetch'), edge('fetch', 'cond', 'out'), edge('cond', 'set'), edge('set', 'reply'), edge('reply', 'a'),
        edge('a', 'b'), edge('b', 'a'), edge('set', 'trg')
      ]
    })
    t.equal(r.valid, false)
    const has = (node_id: string | null, field: RegExp | string | null, message: RegExp) =>
      t.ok(r.errors.some((e: any) => e.node_id === node_id && (field instanceof RegExp ? field.test(e.field ?? '') : e.field === field) && message.test(e.message)), `${node_id} ${String(field)} ${String(message)}`)
    has('cron', 'type', /exactly one entry trigger/)
    has('fetch', 'settings.url', /is required/)
    has('cron', 'settings.cron_expression', /not a valid schedule/)
    has('fetch', 'settings.timeout_ms', /integer from 1 to 3600000, or a \{\{ \}\} expression/)
    has('fetch', 'settings.method', /GET, POST/)
    has('fetch', 'settings.retries', /is not a setting of http_request_node/)
    has('cond', 'settings.conditions.0.operator', /must be one of "equals"/)
    has('set', 'settings.values.a', /does not parse/)
    has('cond', /^edges\./, /no sourceHandle; use 'true' or 'false'/)
    has('trg', /^edges\./, /cannot have incoming edges/)
    has('lonely', null, /not reachable from the trigger/)
    has('a', 'edges', /cycle \(a -> b -> a\)|cycle \(b -> a -> b\)/)
    for (const e of r.errors) t.type(e.message, 'string')
    t.notOk(r.errors.some((e: any) => e.node_id === 'fetch' && /^edges\./.test(e.field)), 'a single-output node ignores the handle name')
    t.notOk(r.errors.some((e: any) => e.node_id === 'reply' && /^edges\./.test(e.field)), 'something may follow a response node')
  })

  t.test('validate says, per HTTP request node, what a non-2xx answer will do', async t => {
    const r = await validate({
      nodes: [
        node('trg', 'http_trigger'),
        node('fetch', 'http_request_node', { url: 'http://127.0.0.1:9/a' }),
        node('tidy', 'set_node', { values: { code: '{{fetch.response.status}}' } }),
        node('check', 'condition_node', { conditions: [{ left: '{{fetch.response.status}}', operator: 'lt', right: 300 }] }),
        node('lenient', 'http_request_node', { url: 'http://127.0.0.1:9/b', continue_on_error: true }),
        node('strict', 'http_request_node', { url: 'http://127.0.0.1:9/c' }),
        node('reply', 'response_node', { status: 200 })
      ],
      edges: [edge('trg', 'fetch'), edge('fetch', 'tidy'), edge('tidy', 'check'), edge('check', 'lenient', 'true'), edge('check', 'reply', 'false'), edge('lenient', 'strict'), edge('strict', 'reply')]
    })
    t.equal(r.valid, true, JSON.stringify(r.errors))
    const rule = Object.fromEntries(r.status_rules.map((x: any) => [x.node_id, x]))
    t.match(rule.fetch, { rule: 'condition', condition_node_id: 'check', message: "Node 'fetch': a non-2xx answer is handled by condition 'check', which reads {{fetch.response.status}}." })
    t.match(rule.lenient, { rule: 'continue_on_error', message: /does not fail the run \(continue_on_error is on\)/ })
    t.match(rule.strict, { rule: 'fails', message: /a non-2xx answer fails the run; add a condition on \{\{strict\.response\.status\}\}/ })
    t.equal(r.status_rules.length, 3, 'one entry per HTTP request node')
    const bad = await validate({ nodes: [node('trg', 'http_trigger'), node('fetch', 'http_request_node', { url: 'http://x/', continue_on_error: 'yes' })], edges: [edge('trg', 'fetch')] })
    t.match(bad.errors, [{ node_id: 'fetch', field: 'settings.continue_on_error' }], 'continue_on_error is a boolean')
  })

  t.test('an enabled save runs the same rules: 400 with the list, nothing changes', async t => {
    const bad = { nodes: [node('trg', 'http_trigger'), node('w', 'delay_node', { delay_ms: 'soon' })], edges: [edge('trg', 'w')] }
    let r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: bad, enabled: true } })
    t.equal(r.status, 400)
    t.equal(r.body.error.code, 'validation_failed')
    t.match(r.body.error.details, [{ node_id: 'w', field: 'settings.delay_ms', message: /Node 'w' \(delay_node\): settings.delay_ms must be an integer from 0 to 3600000/ }])
    t.equal((await m.call('GET', `/api/v1/proxies/${p.id}/workflow`)).body.workflow, null, 'nothing saved')
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: bad, enabled: false } })
    t.equal(r.status, 200, 'a disabled workflow may be saved unfinished')
    r = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow: { nodes: [], edges: [], runtime_settings: { max_queue: -1 } } } })
    t.equal(r.status, 400, 'runtime settings are checked on every save')
    t.match(r.body.error.details, [{ field: 'runtime_settings.max_queue' }])
  })
})
