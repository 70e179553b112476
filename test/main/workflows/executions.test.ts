import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startService } from './service.js'

const flow = (reply: Record<string, unknown>, runtime: Record<string, unknown>, extra: { nodes?: any[], edges?: any[] } = {}) => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'shape', name: 'shape', type: 'set_node', settings: { values: { id: '{{trigger.params.id}}' } } },
    { id: 'reply', name: 'reply', type: 'response_node', settings: reply },
    ...(extra.nodes ?? [])
  ],
  edges: [{ id: 'e1', source: 'trg', target: 'shape' }, { id: 'e2', source: 'shape', target: 'reply' }, ...(extra.edges ?? [])],
  runtime_settings: runtime
})

for (const kind of STORE_KINDS) {
  t.test(`execution records (${kind})`, async t => {
    const w = await startService(t, kind, { EXECUTIONS_PER_WORKFLOW: '4' })
    const p = await w.proxy('/items/{id}')
    const ex = `/workflows/${p.workflow_id as string}/executions`
    const call = async (id: string) => await fetch(`${w.gateway}${p.base as string}/items/${id}`, { method: 'POST', headers: { connection: 'close', 'content-type': 'application/json' }, body: '{"n":1}' })

    // save_on_success: the gateway run is recorded in the background with every node's input and output
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: flow({ status: 200, body: '{{shape.output}}' }, { timeout_ms: 10000, save_on_success: true }), enabled: true })
    let r = await call('7')
    t.equal(r.status, 200)
    t.same(await r.json(), { id: '7' })
    let list = await w.until(ex, b => b.items?.length === 1)
    const rec = list.items[0]
    t.match(rec, {
      workflow_id: p.workflow_id, proxy_id: p.id, mode: 'gateway', status: 'success', workflow_version: 1, replay_of: null, error: null, persisted: true,
      trigger_output: { request: { method: 'POST', path_params: { id: '7' }, body: { n: 1 } } },
      response: { status: 200, body: { id: '7' } }
    })
    t.same(rec.nodes.map((x: any) => [x.node_id, x.status]), [['trg', 'success'], ['shape', 'success'], ['reply', 'success']])
    t.same(rec.nodes[1].output, { output: { id: '7' } })
    t.same(rec.node_inputs.reply, { output: { id: '7' } })
    t.ok(rec.duration_ms >= 0 && Date.parse(rec.finished_at) >= Date.parse(rec.started_at))
    r = await fetch(`${w.gateway}/livez`)
    t.same((await w.api('GET', `${ex}/${rec.id as string}`, undefined, 'viewer')).body, rec, 'readable by id')

    // save_on_success false: successes are not kept, errors are (save_on_error defaults to true)
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: flow({ status: '{{ trigger.params.id == "bad" ? 42 : 200 }}', body: 'ok' }, { save_on_success: false }) })
    t.equal((await call('8')).status, 200)
    r = await call('bad')
    t.equal(r.status, 500)
    const failed = await r.json()
    t.match(failed, { error: { code: 'workflow_failed', message: /^The workflow failed\. Quote the request id/ }, request_id: r.headers.get('x-request-id') })
    t.notMatch(JSON.stringify(failed), /reply|HTTP status/, 'the caller sees no node ids or error text')
    list = await w.until(ex, b => b.items?.length === 2)
    t.match(list.items[0], { status: 'error', mode: 'gateway', workflow_version: 2, error: { node_id: 'reply', message: /not an HTTP status/ } })
    t.match(list.items[0].nodes.at(-1), { node_id: 'reply', status: 'error' })

    // a run past runtime_settings.timeout_ms: 504 at the gateway, a timeout record
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
      workflow: {
        nodes: [{ id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} }, { id: 'wait', name: 'wait', type: 'delay_node', settings: { delay_ms: 5000 } }],
        edges: [{ id: 'e', source: 'trg', target: 'wait' }],
        runtime_settings: { timeout_ms: 300 }
      }
    })
    r = await call('9')
    t.equal(r.status, 504)
    list = await w.until(ex, b => b.items?.length === 3)
    t.match(list.items[0], { status: 'timeout', error: { message: /time limit/ } })

    // filters, paging, bad queries, unknown ids
    t.same((await w.api('GET', `${ex}?status=success`, undefined, 'viewer')).body.items.map((x: any) => x.id), [rec.id])
    t.equal((await w.api('GET', `${ex}?status=error`, undefined, 'viewer')).body.items.length, 1)
    t.equal((await w.api('GET', `${ex}?mode=gateway&limit=2`, undefined, 'viewer')).body.items.length, 2)
    t.equal((await w.api('GET', `${ex}?status=weird`)).status, 400)
    t.equal((await w.api('GET', `${ex}/nope`)).status, 404)
    t.equal((await w.api('GET', '/workflows/nope/executions')).status, 404)

    // replay: the stored trigger output through the current definition, a new record
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: flow({ status: 201, body: { again: '{{shape.output.id}}' } }, { save_on_success: true }) })
    t.equal((await w.api('POST', `${ex}/${rec.id as string}/replay`, undefined, 'viewer')).status, 403)
    const replay = await w.api('POST', `${ex}/${rec.id as string}/replay`)
    t.equal(replay.status, 200)
    t.match(replay.body, { mode: 'replay', replay_of: rec.id, status: 'success', persisted: true, workflow_version: 4, response: { status: 201, body: { again: '7' } } })
    t.same(replay.body.trigger_output, rec.trigger_output)
    t.not(replay.body.id, rec.id)
    t.equal((await w.api('GET', `${ex}/${replay.body.id as string}`, undefined, 'viewer')).status, 200, 'the replay is stored before it is answered')
    t.equal((await w.api('POST', `${ex}/nope/replay`)).status, 404)

    // retention: the newest EXECUTIONS_PER_WORKFLOW records are kept
    for (const id of ['a', 'b', 'c']) t.equal((await call(id)).status, 201)
    list = await w.until(ex, b => b.items?.length === 4 && b.items[0].trigger_output?.request?.path_params?.id === 'c')
    t.same(list.items.map((x: any) => x.trigger_output.request.path_params.id), ['c', 'b', 'a', '7'])
    t.equal(list.items[3].mode, 'replay')
  })
}
