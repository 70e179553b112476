import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import { chain, task } from '../helpers/workflow-task.js'

const call = (workflowId: string, input?: string) => ({ id: 'x', name: 'call', type: 'execute_subworkflow', settings: { workflow_id: workflowId, ...(input !== undefined ? { input } : {}) } })

const double: WorkflowDefinition = chain([{ id: 'd', name: 'd', type: 'set_node', settings: { values: { doubled: '{{ trigger.n * 2 }}' } } }])
const replying: WorkflowDefinition = chain([{ id: 'r', name: 'r', type: 'response_node', settings: { status: 201, body: { got: '{{ trigger.n }}', wf: '{{ $workflow.id }}' } } }])
const failing: WorkflowDefinition = chain([{ id: 'bad', name: 'bad', type: 'response_node', settings: { status: 'nope' } }])
const recursive = (id: string): WorkflowDefinition => chain([{ id: 'x', name: 'again', type: 'execute_subworkflow', settings: { workflow_id: id } }])

/** A loop over trigger.list calling a sub-workflow once per item. */
const loopCalling = (workflowId: string): WorkflowDefinition => ({
  nodes: [
    { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 'l', name: 'each', type: 'loop_node', settings: { items: '{{ trigger.list }}' } },
    { id: 'x', name: 'call', type: 'execute_subworkflow', settings: { workflow_id: workflowId, input: "{{ $json['$item'] }}" } }
  ],
  edges: [{ id: '1', source: 't', target: 'l' }, { id: '2', source: 'l', target: 'x', sourceHandle: 'loop' }, { id: '3', source: 'x', target: 'l' }]
})

t.test('runs the referenced workflow with input as its trigger output; output is its last output or response body', async t => {
  let r = await runWorkflow(task(chain([call('double', '{{ trigger.payload }}')]), { trigger_output: { payload: { n: 21 } }, subworkflows: { double } }))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { output: { doubled: 42 } })
  r = await runWorkflow(task(chain([call('replying')]), { trigger_output: { n: 5 }, subworkflows: { replying } }))
  t.same(r.response?.body, { got: 5, wf: 'replying' }, 'without input, the node input is the sub-run trigger output; the response body is the output')
  t.equal(r.response?.status, 200, 'the sub-workflow response does not answer the caller')
})

t.test('missing workflow, failing sub-run and depth past 5 are clear errors', async t => {
  let r = await runWorkflow(task(chain([call('ghost')]), { subworkflows: {} }))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'x')
  t.match(r.error?.message, /Workflow 'ghost' \(called by 'call'\) does not exist/)
  r = await runWorkflow(task(chain([call('failing')]), { subworkflows: { failing } }))
  t.match(r.error?.message, /Workflow 'failing' failed at node 'bad': status nope is not an HTTP status/)
  t.equal(r.error?.node_id, 'x')
  r = await runWorkflow(task(recursive('self'), { subworkflows: { self: recursive('self') } }))
  t.equal(r.status, 'error')
  t.match(r.error?.message, /nest at most 5 levels deep/)
  r = await runWorkflow(task(chain([call('double')]), { subworkflows: { double }, depth: 5 }))
  t.match(r.error?.message, /would start level 6/)
  r = await runWorkflow(task(chain([{ id: 'x', name: 'call', type: 'execute_subworkflow', settings: {} }])))
  t.match(r.error?.message, /needs a workflow_id/)
})

t.test('a sub-workflow inside a loop runs once per item', async t => {
  const def = loopCalling('double')
  const r = await runWorkflow(task(def, { trigger_output: { list: [{ n: 1 }, { n: 2 }] }, subworkflows: { double } }))
  t.same(r.response?.body, { items: [{ output: { doubled: 2 } }, { output: { doubled: 4 } }] })
})

// Ten calls per level, five levels: 111,110 sub-runs without a budget shared across levels.
const TEN = { list: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }
const fanOut = (id: string, extra: WorkflowDefinition['nodes'] = []): WorkflowDefinition => ({
  nodes: [
    { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 'l', name: 'each', type: 'loop_node', settings: { items: '{{ trigger.list }}' } },
    { id: 'x', name: 'again', type: 'execute_subworkflow', settings: { workflow_id: id, input: '{{ trigger }}' } },
    ...extra
  ],
  edges: [{ id: '1', source: 't', target: 'l' }, { id: '2', source: 'l', target: 'x', sourceHandle: 'loop' }, { id: '3', source: 'x', target: 'l' }]
})

t.test('one run cannot take the worker: sub-runs across all levels share one budget', async t => {
  const started = Date.now()
  const levels = { w1: fanOut('w2'), w2: fanOut('w3'), w3: fanOut('w4'), w4: fanOut('w5'), w5: chain([{ id: 's', name: 's', type: 'set_node', settings: { values: { ok: true } } }]) }
  const r = await runWorkflow(task(fanOut('w1'), { trigger_output: TEN, subworkflows: levels, deadline: Date.now() + 30_000 }))
  t.equal(r.status, 'error')
  t.match(r.error?.message, /^The run started more than 1000 sub-workflow runs/, 'the budget message, not wrapped once per level')
  t.ok(Date.now() - started < 30_000, 'stopped by the budget, well before the deadline')
})

t.test('the deadline stops sub-runs at every level', async t => {
  const slow: WorkflowDefinition = chain([{ id: 'd', name: 'wait', type: 'delay_node', settings: { delay_ms: 20_000 } }])
  const started = Date.now()
  const r = await runWorkflow(task(fanOut('mid'), { trigger_output: TEN, subworkflows: { mid: chain([call('slow')]), slow }, deadline: Date.now() + 300 }))
  t.equal(r.status, 'timeout')
  t.ok(Date.now() - started < 10_000, `ended near the deadline (${Date.now() - started} ms), not after the sub-run's delay`)
})

t.test("a run and its sub-runs share the proxy's budget without waiting for themselves", async t => {
  // A budget of one: each caller gives its permit to the sub-run it waits for, at every level.
  const mid: WorkflowDefinition = chain([call('double', '{{ trigger }}')])
  const outer = chain([call('mid', '{{ trigger }}')])
  const def = loopCalling('mid')
  const runs = await Promise.all([
    runWorkflow(task(def, { trigger_output: { list: [{ n: 1 }, { n: 2 }, { n: 3 }] }, subworkflows: { mid, double }, concurrency: 1, workflow: { id: 'w', proxy_id: 'p-one' } })),
    runWorkflow(task(outer, { trigger_output: { n: 7 }, subworkflows: { mid, double }, concurrency: 1, workflow: { id: 'w2', proxy_id: 'p-one' } }))
  ])
  t.same(runs.map(r => r.status), ['success', 'success'], runs.map(r => r.error?.message).join(' '))
  t.same(runs[0].response?.body, { items: [1, 2, 3].map(n => ({ output: { doubled: 2 * n } })) })
})
