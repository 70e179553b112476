import t from 'tap'
import { createWorkflowPool, type RunEvent } from '../../../src/main/workflows/pool.js'
import { createMemoryKv } from '../../../src/main/cache/memory-kv.js'
import type { RunTask } from '../../../src/workers/engine/types.js'
import type { WorkflowDefinition } from '../../../src/common/types.js'

const pool = createWorkflowPool(1)
t.teardown(() => pool.close())

const task = (definition: WorkflowDefinition, over: Partial<RunTask> = {}): RunTask => ({
  definition, workflow: { id: 'wf' }, execution_id: 'ex', trigger_output: { hello: 'world' },
  deadline: Date.now() + 60_000, outbound_allowlist: [], ...over
})

const simple: WorkflowDefinition = {
  nodes: [
    { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 's', name: 'shape', type: 'set_node', settings: { values: { greeting: 'hi {{ trigger.hello }}' } } },
    { id: 'r', name: 'reply', type: 'response_node', settings: { status: 201, body: '{{ shape.output }}' } }
  ],
  edges: [{ id: '1', source: 't', target: 's' }, { id: '2', source: 's', target: 'r' }]
}

t.test('a plain run needs no hooks', async t => {
  const r = await pool.run(task(simple))
  t.equal(r.status, 'success')
  t.same(r.response, { status: 201, headers: {}, body: { greeting: 'hi world' } })
})

t.test('onEvent receives node_started and node_finished for every node, in order, before run() resolves', async t => {
  const events: RunEvent[] = []
  const r = await pool.run(task(simple, { pinned_outputs: { s: { output: { greeting: 'pinned' } } } }), { onEvent: e => events.push(e) })
  t.equal(r.status, 'success')
  t.same(events.map(e => `${e.type}:${e.node_id}`), ['node_started:t', 'node_finished:t', 'node_started:s', 'node_finished:s', 'node_started:r', 'node_finished:r'])
  const fin = events.filter(e => e.type === 'node_finished')
  t.same(fin.map(e => e.status), ['success', 'pinned', 'success'])
  t.same(events[0], { type: 'node_started', node_id: 't', name: 'trigger', node_type: 'manual_trigger', at: events[0]?.at, input: { hello: 'world' } })
  t.match(events[0]?.at, /^\d{4}-\d\d-\d\dT/)
  t.same((fin[2] as any).output, { status: 201, headers: {}, body: { greeting: 'pinned' } })
  t.type((fin[2] as any).duration_ms, 'number')
})

t.test('a failing node is reported as node_failed with its error', async t => {
  const events: RunEvent[] = []
  const def: WorkflowDefinition = {
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'r', name: 'reply', type: 'response_node', settings: { status: 42 } }],
    edges: [{ id: '1', source: 't', target: 'r' }]
  }
  const r = await pool.run(task(def), { onEvent: e => events.push(e), kv: createMemoryKv() })
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'r')
  const failed = events.find(e => e.type === 'node_failed')
  t.match(failed, { type: 'node_failed', node_id: 'r', name: 'reply', node_type: 'response_node', error: /status 42 is not an HTTP status/ })
})

t.test('a throwing onEvent listener does not break the run', async t => {
  const r = await pool.run(task(simple), { onEvent: () => { throw new Error('listener bug') } })
  t.equal(r.status, 'success')
})
