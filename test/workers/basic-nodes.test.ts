import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import { chain, task } from '../helpers/workflow-task.js'

/** trigger → condition → yes / no set nodes; answers which branch ran. */
function branch (conditions: unknown[], combine?: string): WorkflowDefinition {
  return {
    nodes: [
      { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'c', name: 'check', type: 'condition_node', settings: { conditions, ...(combine !== undefined ? { combine } : {}) } },
      { id: 'y', name: 'yes', type: 'set_node', settings: { values: { branch: 'true' } } },
      { id: 'n', name: 'no', type: 'set_node', settings: { values: { branch: 'false' } } }
    ],
    edges: [{ id: '1', source: 't', target: 'c' }, { id: '2', source: 'c', target: 'y', sourceHandle: 'true' }, { id: '3', source: 'c', target: 'n', sourceHandle: 'false' }]
  }
}
const trigger = { n: 5, s: '5', text: 'order-17', list: ['a', 'b'], none: null }
const which = async (conditions: unknown[], combine?: string) => {
  const r = await runWorkflow(task(branch(conditions, combine), { trigger_output: trigger }))
  if (r.status !== 'success') return r.error?.message
  return (r.response?.body as { output: { branch: string } }).output.branch
}

t.test('condition operators', async t => {
  const cases: Array<[string, unknown, unknown, string]> = [
    ['equals', '{{ trigger.s }}', 5, 'true'], ['equals', '{{ trigger.n }}', 6, 'false'],
    ['not_equals', '{{ trigger.n }}', 6, 'true'], ['not_equals', '{{ trigger.s }}', 5, 'false'],
    ['gt', '{{ trigger.n }}', 4, 'true'], ['gt', '{{ trigger.n }}', 5, 'false'],
    ['gte', '{{ trigger.n }}', 5, 'true'], ['lt', '{{ trigger.s }}', 10, 'true'], ['lte', '{{ trigger.n }}', 4, 'false'],
    ['contains', '{{ trigger.text }}', 'der-1', 'true'], ['contains', '{{ trigger.list }}', 'b', 'true'], ['contains', '{{ trigger.list }}', 'c', 'false'],
    ['exists', '{{ trigger.n }}', null, 'true'], ['exists', '{{ trigger.none }}', null, 'false'], ['exists', '{{ trigger.missing }}', null, 'false'],
    ['matches', '{{ trigger.text }}', '^order-\\d+$', 'true'], ['matches', '{{ trigger.text }}', '^invoice', 'false']
  ]
  for (const [operator, left, right, want] of cases) t.equal(await which([{ left, operator, right }]), want, `${operator} ${String(left)} ${String(right)}`)
})

t.test('combine and / or; bad operators and patterns are errors', async t => {
  const yes = { left: 1, operator: 'equals', right: 1 }
  const no = { left: 1, operator: 'equals', right: 2 }
  t.equal(await which([yes, no]), 'false', 'and is the default')
  t.equal(await which([yes, no], 'or'), 'true')
  t.equal(await which([no, no], 'or'), 'false')
  t.match(await which([{ left: 1, operator: 'like', right: 1 }]), /Unknown condition operator 'like'/)
  t.match(await which([{ left: 'x', operator: 'matches', right: 'a'.repeat(201) }]), /at most 200 characters/)
})

t.test('response, delay and set nodes', async t => {
  let r = await runWorkflow(task(chain([
    { id: 's', name: 'shape', type: 'set_node', settings: { values: { id: '{{ trigger.n }}', label: 'n={{ trigger.n }}' } } },
    { id: 'd', name: 'wait', type: 'delay_node', settings: { delay_ms: 20 } },
    { id: 'r', name: 'reply', type: 'response_node', settings: { status: '{{ 200 + 2 }}', headers: { 'X-Mixed-Case': '{{ trigger.n }}' }, body: '{{ wait.output }}' } }
  ]), { trigger_output: trigger }))
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.same(r.response, { status: 202, headers: { 'x-mixed-case': '5' }, body: { id: 5, label: 'n=5' } }, 'a delay passes its input on; header names are lower-cased')
  r = await runWorkflow(task(chain([{ id: 'r', name: 'reply', type: 'response_node', settings: { status: 700 } }])))
  t.match(r.error?.message, /status 700 is not an HTTP status/)
  r = await runWorkflow(task(chain([{ id: 's', name: 'shape', type: 'set_node', settings: { values: { v: '{{ a + }}' } } }])))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 's')
  t.match(r.error?.message, /ends too early/, 'an expression error names the node')
  r = await runWorkflow(task(chain([{ id: 'z', name: 'odd', type: 'teleport_node', settings: {} }])))
  t.match(r.error?.message, /Node type 'teleport_node' cannot run/)
})

t.test('without a response node the answer is the last output, 200 JSON', async t => {
  const r = await runWorkflow(task(chain([{ id: 's', name: 'shape', type: 'set_node', settings: { values: { ok: true } } }])))
  t.same(r.response, { status: 200, headers: { 'content-type': 'application/json' }, body: { output: { ok: true } } })
})
