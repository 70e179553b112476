import t from 'tap'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string, sourceHandle?: string) => ({ id: `${source}-${target}-${sourceHandle ?? ''}`, source, target, sourceHandle })

t.test('gateway runs through the runner: mailbox limits, sub-workflows and the shared cache', async t => {
  const w = await startService(t, 'embedded', { WORKERS: '2' })
  const post = async (path: string) => await fetch(w.gateway + path, { method: 'POST', headers: { connection: 'close' } })

  t.test('a full mailbox answers 503 with Retry-After at once', async t => {
    const p = await w.proxy('/slow')
    const r = await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
      enabled: true,
      workflow: {
        nodes: [n('trg', 'http_trigger'), n('wait', 'delay_node', { delay_ms: 3000 }), n('reply', 'response_node', { status: 200, body: 'done' })],
        edges: [e('trg', 'wait'), e('wait', 'reply')],
        runtime_settings: { timeout_ms: 30000, max_concurrency: 1, max_queue: 0 }
      }
    })
    t.equal(r.status, 200)
    // Two at once: one holds the only slot for 3 s, the other finds no room.
    const answers = await Promise.all([post(`${p.base as string}/slow`), post(`${p.base as string}/slow`)])
    const statuses = answers.map(a => a.status).sort()
    t.same(statuses, [200, 503])
    const busy = answers.find(a => a.status === 503)!
    t.equal(busy.headers.get('retry-after'), '1')
    t.match(await busy.json(), { error: { code: 'service_unavailable', message: /busy/ } })
    t.equal((await post(`${p.base as string}/slow`)).status, 200, 'room again once the run ended')

    const bad = await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: { nodes: [], edges: [], runtime_settings: { max_concurrency: 0 } } })
    t.equal(bad.status, 400)
    t.match(bad.body.error.details, [{ field: 'runtime_settings.max_concurrency' }])
  })

  t.test('execute_subworkflow runs another proxy\'s saved workflow', async t => {
    const inner = await w.proxy('/inner')
    await w.api('PUT', `/proxies/${inner.id as string}/workflow`, {
      workflow: { nodes: [n('in', 'http_trigger'), n('double', 'response_node', { status: 200, body: { twice: '{{ trigger.n * 2 }}' } })], edges: [e('in', 'double')] }
    })
    const outer = await w.proxy('/outer/{n}')
    const r = await w.api('PUT', `/proxies/${outer.id as string}/workflow`, {
      enabled: true,
      workflow: {
        nodes: [
          n('trg', 'http_trigger'),
          n('sub', 'execute_subworkflow', { workflow_id: inner.workflow_id, input: { n: '{{ Number(trigger.params.n) }}' } }),
          n('reply', 'response_node', { status: 200, body: '{{sub}}' })
        ],
        edges: [e('trg', 'sub'), e('sub', 'reply')]
      }
    })
    t.equal(r.status, 200)
    const res = await post(`${outer.base as string}/outer/21`)
    t.equal(res.status, 200)
    t.same(await res.json(), { twice: 42 })
    t.same(await (await post(`${outer.base as string}/outer/5`)).json(), { twice: 10 }, 'again, with the sub-workflow kept from the first run')

    // The sub-workflow saved again: the caller's next run uses the new version at once.
    const changed = await w.api('PUT', `/proxies/${inner.id as string}/workflow`, {
      workflow: { nodes: [n('in', 'http_trigger'), n('triple', 'response_node', { status: 200, body: { thrice: '{{ trigger.n * 3 }}' } })], edges: [e('in', 'triple')] }
    })
    t.equal(changed.status, 200)
    t.same(await (await post(`${outer.base as string}/outer/5`)).json(), { thrice: 15 })
  })

  t.test('cache_lookup_node reaches the shared cache', async t => {
    const p = await w.proxy('/cached/{k}')
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
      enabled: true,
      workflow: {
        nodes: [
          n('trg', 'http_trigger'),
          n('get', 'cache_lookup_node', { operation: 'get', key: 'k:{{trigger.params.k}}' }),
          n('set', 'cache_lookup_node', { operation: 'set', key: 'k:{{trigger.params.k}}', value: 'stored', ttl_seconds: 60 }),
          n('hit', 'response_node', { status: 200, body: { from: 'cache', value: '{{get.value}}' } }),
          n('miss', 'response_node', { status: 201, body: { from: 'origin' } })
        ],
        edges: [e('trg', 'get'), e('get', 'hit', 'hit'), e('get', 'set', 'miss'), e('set', 'miss')]
      }
    })
    let res = await post(`${p.base as string}/cached/a`)
    t.equal(res.status, 201)
    res = await post(`${p.base as string}/cached/a`)
    t.equal(res.status, 200)
    t.same(await res.json(), { from: 'cache', value: 'stored' })
  })

  t.test('records: large values are bounded; a store fault never fails the run', async t => {
    const p = await w.proxy('/big')
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
      enabled: true,
      workflow: {
        nodes: [n('trg', 'http_trigger'), n('reply', 'response_node', { status: 200, body: { size: '{{ trigger.request.body.length }}' } })],
        edges: [e('trg', 'reply')],
        runtime_settings: { save_on_success: true }
      }
    })
    const big = 'x'.repeat(300 * 1024)
    const res = await fetch(`${w.gateway}${p.base as string}/big`, { method: 'POST', headers: { connection: 'close', 'content-type': 'text/plain' }, body: big })
    t.equal(res.status, 200)
    t.same(await res.json(), { size: big.length })
    const list = await w.until(`/workflows/${p.workflow_id as string}/executions`, b => b.items?.length === 1)
    t.match(list.items[0].trigger_output, { truncated: true })
    t.ok(list.items[0].trigger_output.bytes > 300 * 1024)
    t.same(list.items[0].nodes[1].output, { status: 200, headers: {}, body: { size: big.length } }, 'small values are kept')

    // The executions table is gone (a real database fault): runs still answer, records are not stored.
    await w.s.store.query('DROP TABLE executions')
    const again = await fetch(`${w.gateway}${p.base as string}/big`, { method: 'POST', headers: { connection: 'close', 'content-type': 'text/plain' }, body: 'small' })
    t.equal(again.status, 200)
    const r = await w.api('POST', `/workflows/${p.workflow_id as string}/test`, {})
    t.equal(r.status, 200)
    t.match(r.body, { status: 'success', persisted: false })
  })
})
