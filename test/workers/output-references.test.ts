/**
 * `{{<node>.output}}`, the spec's general form, reads every node kind's output (set_node keeps its
 * and xml_node keep their own `output` field), and references that resolve to nothing are listed on the node's record.
 */
import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowNode } from '../../src/common/types.js'
import { chain, task } from '../helpers/workflow-task.js'
import { startBackend } from '../helpers/gateway.js'

const KINDS: Array<Omit<WorkflowNode, 'id' | 'name'>> = [
  { type: 'set_node', settings: { values: { total: 3 } } },
  { type: 'code_node', settings: { code: 'return { n: 41 + 1, list: [1, 2] }' } },
  { type: 'delay_node', settings: { delay_ms: 1 } },
  { type: 'condition_node', settings: { conditions: [{ left: '{{ trigger.n }}', operator: 'equals', right: 5 }] } },
  { type: 'xml_node', settings: { mode: 'json_to_xml', source: '{{ trigger.doc }}' } },
  { type: 'parallel_node', settings: { branches: 1 } },
  { type: 'merge_node', settings: {} }
]

t.test('{{<node>.output}} is the output of every node kind', async t => {
  const backend = await startBackend(t, (req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"ok":true}') })
  const kinds = [...KINDS, { type: 'http_request_node', settings: { method: 'GET', url: `${backend.url}/x` } }]
  for (const kind of kinds) {
    const def = chain([
      { id: 'x', name: 'subject', ...kind },
      { id: 'p', name: 'probe', type: 'set_node', settings: { values: { whole: '{{ subject.output }}', byName: "{{ $node['subject'].output }}", byId: "{{ $json['x'].output }}" } } }
    ])
    // A condition answers on its `true` handle here (trigger.n is 5).
    if (kind.type === 'condition_node') def.edges.find(e => e.source === 'x')!.sourceHandle = 'true'
    const r = await runWorkflow(task(def, { trigger_output: { n: 5, doc: { order: { id: 7 } } }, outbound_allowlist: ['127.0.0.1'] }))
    t.equal(r.status, 'success', `${kind.type} runs`)
    const subject = r.nodes.find(n => n.node_id === 'x')!.output as Record<string, unknown>
    // Kinds whose output has an `output` field of their own (set, xml) answer that field.
    const expected = Object.prototype.hasOwnProperty.call(subject, 'output') ? subject.output : subject
    if (kind.type === 'set_node' || kind.type === 'xml_node') t.ok(Object.prototype.hasOwnProperty.call(subject, 'output'), `${kind.type} outputs {output}`)
    const probe = r.nodes.find(n => n.node_id === 'p')!
    t.same(probe.output, { output: { whole: expected, byName: expected, byId: expected } }, `${kind.type}: .output reads its output`)
    t.notOk(probe.unresolved, `${kind.type}: nothing unresolved`)
  }
})

t.test('a field of a node\'s output is still read directly, and .output reaches into it', async t => {
  const def = chain([
    { id: 'c', name: 'calc', type: 'code_node', settings: { code: 'return { n: 42 }' } },
    { id: 'p', name: 'probe', type: 'set_node', settings: { values: { direct: '{{ calc.n }}', viaOutput: '{{ calc.output.n }}', text: 'n={{ calc.output.n }}' } } }
  ])
  const r = await runWorkflow(task(def))
  t.same(r.nodes.find(n => n.node_id === 'p')!.output, { output: { direct: 42, viaOutput: 42, text: 'n=42' } })
})

t.test('references that resolve to nothing are listed on the node\'s record', async t => {
  const def = chain([
    { id: 'c', name: 'calc', type: 'code_node', settings: { code: 'return { n: 42 }' } },
    { id: 'p', name: 'probe', type: 'set_node', settings: { values: { a: '{{ nosuch.output }}', b: "x{{ $node['ghost'].value }}y", c: '{{ calc.missing }}', d: '{{ calc.n }}' } } }
  ])
  const r = await runWorkflow(task(def))
  const probe = r.nodes.find(n => n.node_id === 'p')!
  t.match(probe.output, { output: { b: 'xy', d: 42 } }, 'the run goes on with empty values')
  t.equal((probe.output as { output: Record<string, unknown> }).output.a, undefined)
  t.same(probe.unresolved, ['{{ nosuch.output }}', "{{ $node['ghost'].value }}", '{{ calc.missing }}'])
  t.notOk(r.nodes.find(n => n.node_id === 'c')!.unresolved)
})
