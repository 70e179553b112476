import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition, WorkflowNode } from '../../src/common/types.js'
import { task } from '../helpers/workflow-task.js'

const trigger = { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }
const list = (values: unknown) => ({ id: 'src', name: 'src', type: 'set_node', settings: { values: { list: values } } })

/** trigger → src → loop(items) ─loop→ body… ─→ loop; loop ─done→ after. */
function loopFlow (items: string, body: [WorkflowNode, ...WorkflowNode[]], bodyEdges: WorkflowDefinition['edges'], loopHandle: string | null = 'loop'): WorkflowDefinition {
  return {
    nodes: [trigger, list(['a', 'b', 'c']), { id: 'l', name: 'each', type: 'loop_node', settings: { items } }, ...body,
      { id: 'after', name: 'after', type: 'set_node', settings: { values: { count: '{{ each.items.length }}', last: '{{ each.items.last() }}' } } }],
    edges: [{ id: 'e1', source: 't', target: 'src' }, { id: 'e2', source: 'src', target: 'l' },
      { id: 'in', source: 'l', target: body[0].id, sourceHandle: loopHandle }, ...bodyEdges,
      { id: 'done', source: 'l', target: 'after', sourceHandle: 'done' }]
  }
}

t.test('the body runs once per item in order with the loop context, then done gets every iteration\'s last output', async t => {
  const def = loopFlow('{{ src.output.list }}', [
    { id: 'b1', name: 'upper', type: 'set_node', settings: { values: { v: "{{ $json['$item'].toUpperCase() }}", i: "{{ $json['$index'] }}", total: "{{ $json['$loop'].total }}", first: "{{ $json['$loop'].first }}", input: '{{ $input.first() }}' } } },
    { id: 'b2', name: 'tag', type: 'set_node', settings: { values: { tagged: '{{ upper.output.v }}-{{ $json[\'$index\'] }}' } } }
  ], [{ id: 'b12', source: 'b1', target: 'b2' }, { id: 'back', source: 'b2', target: 'l' }])
  const r = await runWorkflow(task(def))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { output: { count: 3, last: { output: { tagged: 'C-2' } } } })
  const loopOut = r.nodes.find(n => n.node_id === 'l')!.output as { items: unknown[] }
  t.same(loopOut.items, [{ output: { tagged: 'A-0' } }, { output: { tagged: 'B-1' } }, { output: { tagged: 'C-2' } }])
  const b1 = r.nodes.filter(n => n.node_id === 'b1')
  t.same(b1.map(n => n.loop_index), [0, 1, 2], 'each iteration is recorded')
  t.same(b1.map(n => (n.output as any).output), [
    { v: 'A', i: 0, total: 3, first: true, input: 'a' },
    { v: 'B', i: 1, total: 3, first: false, input: 'b' },
    { v: 'C', i: 2, total: 3, first: false, input: 'c' }
  ], 'the body entry receives the item as its input')
  t.same(r.nodes.map(n => n.node_id), ['t', 'src', 'b1', 'b2', 'b1', 'b2', 'b1', 'b2', 'l', 'after'])
})

t.test('an empty source handle is the loop handle; a dead-end body (no edge back) also ends the iteration', async t => {
  const def = loopFlow('{{ src.output.list }}', [{ id: 'b1', name: 'echo', type: 'set_node', settings: { values: { it: "{{ $json['$item'] }}" } } }], [], null)
  const r = await runWorkflow(task(def))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same((r.nodes.find(n => n.node_id === 'l')!.output as any).items, [{ output: { it: 'a' } }, { output: { it: 'b' } }, { output: { it: 'c' } }])
})

t.test('a condition inside the body: each iteration ends at the branch that ran', async t => {
  const def = loopFlow('{{ src.output.list }}', [
    { id: 'c', name: 'isB', type: 'condition_node', settings: { conditions: [{ left: "{{ $json['$item'] }}", operator: 'equals', right: 'b' }] } },
    { id: 'yes', name: 'yes', type: 'set_node', settings: { values: { hit: "{{ $json['$item'] }}" } } },
    { id: 'no', name: 'no', type: 'set_node', settings: { values: { miss: "{{ $json['$item'] }}" } } }
  ], [{ id: 'cy', source: 'c', target: 'yes', sourceHandle: 'true' }, { id: 'cn', source: 'c', target: 'no', sourceHandle: 'false' },
    { id: 'by', source: 'yes', target: 'l' }, { id: 'bn', source: 'no', target: 'l' }])
  const r = await runWorkflow(task(def))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same((r.nodes.find(n => n.node_id === 'l')!.output as any).items, [{ output: { miss: 'a' } }, { output: { hit: 'b' } }, { output: { miss: 'c' } }])
})

t.test('nested loops: the inner loop sees its own item, the outer item stays reachable by node output', async t => {
  const def: WorkflowDefinition = {
    nodes: [trigger, list([[1, 2], [3]]),
      { id: 'outer', name: 'rows', type: 'loop_node', settings: { items: '{{ src.output.list }}' } },
      { id: 'inner', name: 'cells', type: 'loop_node', settings: { items: "{{ $json['$item'] }}" } },
      { id: 'dbl', name: 'dbl', type: 'set_node', settings: { values: { v: "{{ $json['$item'] * 2 }}" } } },
      { id: 'row', name: 'row', type: 'set_node', settings: { values: { cells: '{{ cells.items.length }}' } } }
    ],
    edges: [{ id: '1', source: 't', target: 'src' }, { id: '2', source: 'src', target: 'outer' },
      { id: '3', source: 'outer', target: 'inner', sourceHandle: 'loop' }, { id: '4', source: 'inner', target: 'dbl', sourceHandle: 'loop' },
      { id: '5', source: 'dbl', target: 'inner' }, { id: '6', source: 'inner', target: 'row', sourceHandle: 'done' }, { id: '7', source: 'row', target: 'outer' }]
  }
  const r = await runWorkflow(task(def))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response?.body, { items: [{ output: { cells: 2 } }, { output: { cells: 1 } }] })
  t.same(r.nodes.filter(n => n.node_id === 'dbl').map(n => (n.output as any).output.v), [2, 4, 6])
})

t.test('bad items, too many items, and a failing body node', async t => {
  let r = await runWorkflow(task(loopFlow('{{ src.output }}', [{ id: 'b', name: 'b', type: 'set_node', settings: {} }], [])))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'l')
  t.match(r.error?.message, /items must be a list, but the expression gave an object/)
  r = await runWorkflow(task(loopFlow('{{ src.output.missing }}', [{ id: 'b', name: 'b', type: 'set_node', settings: {} }], [])))
  t.match(r.error?.message, /needs items/)
  const big: WorkflowDefinition = loopFlow('{{ trigger.many }}', [{ id: 'b', name: 'b', type: 'set_node', settings: {} }], [])
  r = await runWorkflow(task(big, { trigger_output: { many: Array.from({ length: 10_001 }, (_, i) => i) } }))
  t.match(r.error?.message, /10001 items; at most 10000/)
  r = await runWorkflow(task(loopFlow('{{ src.output.list }}', [{ id: 'bad', name: 'bad', type: 'response_node', settings: { status: "{{ $json['$index'] == 1 ? 999 : 200 }}" } }], [])))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'bad', 'the failing body node is named, not the loop')
  t.equal(r.nodes.filter(n => n.node_id === 'bad').length, 2, 'the loop stopped at the failing iteration')
})

t.test('a long loop of synchronous nodes still stops at the run deadline', async t => {
  const def = loopFlow('{{ trigger.many }}', [
    { id: 'b', name: 'spin', type: 'code_node', settings: { code: 'let x = 0; for (let i = 0; i < 1e5; i++) x += i; return x' } }
  ], [{ id: 'back', source: 'b', target: 'l' }])
  const r = await runWorkflow(task(def, { trigger_output: { many: Array.from({ length: 10_000 }, (_, i) => i) }, deadline: Date.now() + 1500 }))
  t.equal(r.status, 'timeout', r.error?.message ?? 'the run times out')
  t.ok(r.nodes.filter(n => n.node_id === 'b').length < 10_000, 'stopped part-way')
})

t.test('partial runs: a pinned loop goes straight to done; a destination inside the body stops before done', async t => {
  const def = loopFlow('{{ src.output.list }}', [{ id: 'b1', name: 'echo', type: 'set_node', settings: { values: { it: "{{ $json['$item'] }}" } } }], [{ id: 'back', source: 'b1', target: 'l' }])
  let r = await runWorkflow(task(def, { pinned_outputs: { l: { items: ['x', 'y'] } } }))
  t.equal(r.status, 'success')
  t.notOk(r.nodes.some(n => n.node_id === 'b1'), 'the body did not run')
  t.same(r.response?.body, { output: { count: 2, last: 'y' } })
  r = await runWorkflow(task(def, { destination_node: 'b1' }))
  t.equal(r.status, 'success')
  t.equal(r.nodes.filter(n => n.node_id === 'b1').length, 3)
  t.notOk(r.nodes.some(n => n.node_id === 'after'), 'done did not run')
  r = await runWorkflow(task(def, { start_node: 'b1', pinned_outputs: { src: { output: { list: [] } } } }))
  t.equal(r.status, 'success', 'a run may start inside a body (once, without loop context)')
  t.same(r.nodes.map(n => n.node_id), ['b1'])
})
