/**
 * parallel_node and merge_node as the spec says: a parallel node starts one branch per outgoing
 * edge (its `branches` must match them, checked at save), and a merge waits for all connected
 * inputs: for each, until it has delivered or is known to be skipped (a condition's other handle).
 */
import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import { checkDefinition } from '../../src/main/workflows/definition.js'
import { task } from '../helpers/workflow-task.js'

const fanOut = (branches: number, edges = branches): WorkflowDefinition => ({
  nodes: ([
    { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 'p', name: 'fan', type: 'parallel_node', settings: { branches } },
    { id: 'slow', name: 'slow', type: 'delay_node', settings: { delay_ms: 150 } },
    { id: 'fast', name: 'fast', type: 'set_node', settings: { values: { from: 'fast' } } },
    { id: 'third', name: 'third', type: 'set_node', settings: { values: { from: 'third' } } },
    { id: 'm', name: 'join', type: 'merge_node', settings: {} },
    { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: { type: 'json', content: '{{ join.output }}' } } }
  ] as WorkflowDefinition['nodes']).filter(n => !['slow', 'fast', 'third'].includes(n.id) || ['slow', 'fast', 'third'].slice(0, edges).includes(n.id)),
  edges: [
    { id: 'e-t', source: 't', target: 'p' },
    ...['slow', 'fast', 'third'].slice(0, edges).flatMap(b => [{ id: `e-p-${b}`, source: 'p', target: b }, { id: `e-${b}-m`, source: b, target: 'm' }]),
    { id: 'e-m', source: 'm', target: 'r' }
  ]
})

t.test('a merge after a parallel node waits for every branch, the slow one included', async t => {
  const r = await runWorkflow(task(fanOut(2), { trigger_output: { go: true } }))
  t.equal(r.status, 'success')
  const merge = r.nodes.find(n => n.node_id === 'm')!
  const slow = r.nodes.find(n => n.node_id === 'slow')!
  t.ok(Date.parse(merge.started_at) >= Date.parse(slow.started_at) + slow.duration_ms, 'the merge started after the slow branch finished')
  const items = (merge.output as { items: unknown[] }).items
  t.equal(items.length, 2, 'both branches joined')
  t.same(items.find(i => (i as { output?: unknown }).output !== undefined), { output: { from: 'fast' } })
})

t.test('parallel_node branches must match its outgoing edges (checked at save)', async t => {
  t.same(checkDefinition(fanOut(3), { enabled: true }), [])
  const problems = checkDefinition(fanOut(3, 2), { enabled: true })
  t.same(problems, [{ node_id: 'p', field: 'settings.branches', message: "Node 'fan' (parallel_node): settings.branches is 3 but 2 edges leave it; connect one edge per branch or change branches." }])
  const def = fanOut(2)
  delete (def.nodes[1]!.settings as Record<string, unknown>).branches
  t.same(checkDefinition(def, { enabled: true }), [], 'without branches any number of edges is fine')
})

t.test('a merge after both handles of a condition joins the branch that ran', async t => {
  const def: WorkflowDefinition = {
    nodes: [
      { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'c', name: 'check', type: 'condition_node', settings: { conditions: [{ left: '{{ trigger.n }}', operator: 'gt', right: 3 }] } },
      { id: 'y', name: 'big', type: 'set_node', settings: { values: { size: 'big' } } },
      { id: 'n', name: 'small', type: 'set_node', settings: { values: { size: 'small' } } },
      { id: 'm', name: 'join', type: 'merge_node', settings: {} }
    ],
    edges: [
      { id: 'e-t', source: 't', target: 'c' },
      { id: 'e-c-y', source: 'c', target: 'y', sourceHandle: 'true' }, { id: 'e-c-n', source: 'c', target: 'n', sourceHandle: 'false' },
      { id: 'e-y-m', source: 'y', target: 'm' }, { id: 'e-n-m', source: 'n', target: 'm' }
    ]
  }
  for (const [n, size] of [[5, 'big'], [1, 'small']] as const) {
    const r = await runWorkflow(task(def, { trigger_output: { n } }))
    t.equal(r.status, 'success')
    t.same(r.nodes.find(x => x.node_id === 'm')!.output, { items: [{ output: { size } }] }, `n=${n}: the merge ran once, with the ${size} branch`)
  }
})
