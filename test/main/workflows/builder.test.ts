import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { openStream, reader } from '../../helpers/sse.js'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string, sourceHandle?: string) => ({ id: `${source}-${target}`, source, target, sourceHandle })

// trigger -> fetch (an unreachable backend unless pinned) -> ok? -> reply / fail
const saved = {
  nodes: [
    n('trg', 'http_trigger'),
    n('fetch', 'http_request_node', { url: 'http://127.0.0.1:9/users/{{trigger.params.id}}', timeout_ms: 2000 }),
    n('ok', 'condition_node', { conditions: [{ left: '{{fetch.response.status}}', operator: 'equals', right: 200 }] }),
    n('reply', 'response_node', { status: 200, body: { name: '{{fetch.response.body.name}}', id: '{{trigger.params.id}}' } }),
    n('fail', 'response_node', { status: 404, body: 'none' })
  ],
  edges: [e('trg', 'fetch'), e('fetch', 'ok'), e('ok', 'reply', 'true'), e('ok', 'fail', 'false')],
  runtime_settings: { timeout_ms: 60_000, save_on_success: true, save_on_error: true }
}
const pinnedFetch = { fetch: { response: { status: 200, headers: {}, body: { name: 'Ada' } }, timedOut: false } }
const input = { request: { method: 'GET', path: '/u/7', path_params: { id: '7' }, query: {}, headers: {}, body: null } }

for (const kind of STORE_KINDS) {
  t.test(`builder runs (${kind})`, async t => {
    const w = await startService(t, kind)
    const p = await w.proxy('/u/{id}')
    const wf = `/workflows/${p.workflow_id as string}`
    t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: saved })).status, 200, 'saved, not enabled')
    // Builder runs emit no change events: the stream sees only the saves made below.
    const events = await openStream(t, `http://127.0.0.1:${w.s.managementPort}/api/v1/events/stream`, { authorization: `Bearer ${await w.s.issueToken!('watcher', 'viewer')}` })
    t.equal(events.res.status, 200)

    // test run of the saved definition, with pinned outputs standing in for the backend
    let r = await w.api('POST', `${wf}/test`, { input, pinned_outputs: pinnedFetch })
    t.equal(r.status, 200)
    t.match(r.body, { mode: 'test', status: 'success', persisted: true, workflow_version: 1, response: { status: 200, body: { name: 'Ada', id: '7' } }, trigger_output: input })
    t.same(r.body.nodes.map((x: any) => [x.node_id, x.status]), [['trg', 'success'], ['fetch', 'pinned'], ['ok', 'success'], ['reply', 'success']])
    t.equal((await w.api('GET', `${wf}/executions/${r.body.id as string}`, undefined, 'viewer')).body.mode, 'test', 'a test run is stored when the runtime settings say so')
    t.equal((await w.api('POST', `${wf}/test`, { input }, 'viewer')).status, 403, 'viewers cannot run')

    // a posted definition: runs without saving it; invalid ones answer the validation list
    const posted = { ...saved, nodes: saved.nodes.map(x => x.id === 'reply' ? { ...x, settings: { status: 202, body: 'posted' } } : x), runtime_settings: { save_on_success: false } }
    r = await w.api('POST', `${wf}/test`, { workflow: posted, input, pinned_outputs: pinnedFetch })
    t.match(r.body, { status: 'success', persisted: false, workflow_version: null, response: { status: 202, body: 'posted' } })
    t.equal((await w.api('GET', `${wf}/executions/${r.body.id as string}`)).status, 404, 'not stored (save_on_success false)')
    r = await w.api('POST', `${wf}/test`, { workflow: { ...saved, edges: [...saved.edges, e('reply', 'fetch')] }, input })
    t.equal(r.status, 400)
    t.equal(r.body.error.code, 'validation_failed')
    t.match(r.body.error.details, [{ field: 'edges', message: /cycle/ }])
    t.equal((await w.api('POST', `${wf}/test`, { input, pinned_outputs: { ghost: 1 } })).status, 400, 'pins must name nodes')
    t.equal((await w.api('POST', '/workflows/nope/test', { input })).status, 404)

    // a failing test run is an answer too (the record says where it failed)
    r = await w.api('POST', `${wf}/test`, { input })
    t.equal(r.status, 200)
    t.match(r.body, { status: 'error', error: { node_id: 'fetch' } })

    // partial: up to a node, never stored
    const before = (await w.api('GET', `${wf}/executions`)).body.items.length
    r = await w.api('POST', `${wf}/execute-partial`, { input, pinned_outputs: pinnedFetch, destination_node: 'ok' })
    t.equal(r.status, 200)
    t.match(r.body, { mode: 'partial', status: 'success', persisted: false })
    t.same(r.body.nodes.map((x: any) => x.node_id), ['trg', 'fetch', 'ok'], 'stops at destination_node')
    // from a node: its upstream must be pinned
    r = await w.api('POST', `${wf}/execute-partial`, { input, start_node: 'ok' })
    t.equal(r.status, 400)
    t.match(r.body.error.details, [{ field: 'pinned_outputs.fetch', message: /pin its output/ }])
    r = await w.api('POST', `${wf}/execute-partial`, { input, start_node: 'ok', pinned_outputs: { fetch: { response: { status: 500 } } } })
    t.same(r.body.nodes.map((x: any) => x.node_id), ['ok', 'fail'])
    t.match(r.body.response, { status: 404 })
    t.equal((await w.api('POST', `${wf}/execute-partial`, { destination_node: 'nope' })).status, 400)
    r = await w.api('POST', `${wf}/execute-partial`, { input, start_node: 'fetch', pinned_outputs: pinnedFetch })
    t.equal(r.status, 200, 'a start node fed by the trigger takes the input as the trigger output')
    t.same(r.body.nodes.map((x: any) => x.node_id), ['fetch', 'ok', 'reply'])
    t.match(r.body.response, { status: 200, body: { name: 'Ada', id: '7' } })
    t.equal((await w.api('GET', `${wf}/executions`)).body.items.length, before, 'partial runs are never stored')

    // one node, with its input standing in for upstream
    r = await w.api('POST', `${wf}/nodes/ok/test`, { input, node_input: { response: { status: 200 } }, pinned_outputs: { fetch: { response: { status: 200 } } } })
    t.equal(r.status, 200)
    t.match(r.body, { mode: 'node', status: 'success', persisted: false })
    t.same(r.body.nodes.map((x: any) => x.node_id), ['ok'])
    t.match(r.body.nodes[0].output, { result: true })
    r = await w.api('POST', `${wf}/nodes/reply/test`, { input, node_input: {}, pinned_outputs: pinnedFetch })
    t.match(r.body, { status: 'success', response: { status: 200, body: { name: 'Ada' } } })
    t.equal((await w.api('POST', `${wf}/nodes/ghost/test`, {})).status, 400)

    // manual runs need a manual_trigger
    r = await w.api('POST', `${wf}/manual-run`)
    t.equal(r.status, 400)
    t.match(r.body.error.message, /manual_trigger/)
    await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
      workflow: { nodes: [n('go', 'manual_trigger'), n('say', 'set_node', { values: { how: '{{trigger.trigger}}', at: '{{trigger.triggered_at}}' } })], edges: [e('go', 'say')], runtime_settings: { save_on_success: true } }
    })
    r = await w.api('POST', `${wf}/manual-run`)
    t.equal(r.status, 200)
    t.match(r.body, { mode: 'manual', status: 'success', persisted: true, trigger_output: { trigger: 'manual' } })
    t.equal(r.body.nodes[1].output.output.how, 'manual')
    t.ok(Date.parse(r.body.nodes[1].output.output.at) > 0)

    // the test stream: node events as they happen, then the record
    const res = await fetch(`http://127.0.0.1:${w.s.managementPort}/api/v1${wf}/test/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await w.s.issueToken!('ed', 'editor')}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ workflow: saved, input, pinned_outputs: pinnedFetch })
    })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^text\/event-stream/)
    const sse = reader(res)
    const frames: Array<{ event?: string, data: any }> = []
    for (let i = 0; i < 20; i++) {
      const f = await sse.nextData()
      if (f === undefined) break
      frames.push({ event: f.event, data: JSON.parse(f.data.join('\n')) })
      if (f.event === 'execution') break
    }
    t.same(frames.map(f => `${f.event as string}:${f.data.node_id as string ?? ''}`), [
      'node_started:trg', 'node_finished:trg', 'node_started:fetch', 'node_finished:fetch', 'node_started:ok', 'node_finished:ok',
      'node_started:reply', 'node_finished:reply', 'execution:'
    ])
    t.match(frames[3]?.data, { status: 'pinned', output: pinnedFetch.fetch })
    t.match(frames.at(-1)!.data, { status: 'success', mode: 'test', response: { status: 200 } })
    const bad = await w.api('POST', `${wf}/test/stream`, { workflow: { nodes: [], edges: [] } })
    t.equal(bad.status, 400, 'an invalid definition is a plain 400 before any stream')

    await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: false })
    const seen: any[] = []
    for (let i = 0; i < 2; i++) { const f = await events.r.nextData(); if (f !== undefined) seen.push(JSON.parse(f.data.join('\n'))) }
    t.match(seen, [
      { resource_kind: 'proxy_workflow', proxy_id: p.id, definition_changed: true },
      { resource_kind: 'proxy_workflow', proxy_id: p.id, definition_changed: false, enabled_changed: false }
    ], 'the only events are the manual-trigger save and the sentinel: the runs emitted none')
  })
}
