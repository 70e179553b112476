import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import { chain, task } from '../helpers/workflow-task.js'

const call = (workflowId: string, input?: string) => ({ id: 'x', name: 'call', type: 'execute_subworkflow', settings: { workflow_id: workflowId, ...(input !== undefined ? { input } : {}) } })

const double: WorkflowDefinition = chain([{ id: 'd', name: 'd', type: 'set_node', settings: { values: { doubled: '{{ trigger.n * 2 }}' } } }])
const replying: WorkflowDefinition = chain([{ id: 'r', name: 'r', type: 'response_node', settings: { status: 201, body: { got: '{{ trigger.n }}', wf: '{{ $workflow.id }}' } } }])
const failing: WorkflowDefinition = chain([{ id: 'bad', name: 'bad', type: 'response_node', settings: { status: 'nope' } }])
const recursive = (id: string): WorkflowDefinition => chain([{ id: 'x', name: 'again', type: 'execute_subworkflow', settings: { workflow_id: id } }])

t.test('runs the referenced workflow with input as its trigger output; output is its last output or response body', async t => {
  let r = await runWorkflow(task(chain([call('double', '{{ trigger.payload }}')]), { trigger_output: { payload: { n: 21 } }, subworkflows: { double } }))
  t.equal(r.status, 'success', r.error?.message)
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
  const def: WorkflowDefinition = {
    nodes: [
      { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'l', name: 'each', type: 'loop_node', settings: { items: '{{ trigger.list }}' } },
      { id: 'x', name: 'call', type: 'execute_subworkflow', settings: { workflow_id: 'double', input: "{{ $json['$item'] }}" } }
    ],
    edges: [{ id: '1', source: 't', target: 'l' }, { id: '2', source: 'l', target: 'x', sourceHandle: 'loop' }, { id: '3', source: 'x', target: 'l' }]
  }
  const r = await runWorkflow(task(def, { trigger_output: { list: [{ n: 1 }, { n: 2 }] }, subworkflows: { double } }))
  t.same(r.response?.body, { items: [{ output: { doubled: 2 } }, { output: { doubled: 4 } }] })
})
