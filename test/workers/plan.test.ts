import t from 'tap'
import { compilePlan, planFor, PLAN_CACHE_SIZE } from '../../src/workers/engine/plan.js'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import type { RunTask } from '../../src/workers/engine/types.js'

const def = (tag: string): WorkflowDefinition => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'reply', name: 'reply', type: 'response_node', settings: { status: 200, body: { tag, id: '{{trigger.params.id}}' } } }
  ],
  edges: [{ id: 'e', source: 'trg', target: 'reply' }]
} as unknown as WorkflowDefinition)

const task = (over: Partial<RunTask>): RunTask => ({
  workflow: { id: 'w' }, execution_id: 'x', trigger_output: { request: { path_params: { id: '5' } } }, deadline: Date.now() + 20000, outbound_allowlist: [], ...over
})

t.test('a keyed definition is compiled once; unkeyed ones every time', async t => {
  const k = `k-${Math.random()}`
  const p1 = planFor({ definition: def('a'), definition_key: k })
  t.equal(planFor({ definition: def('a'), definition_key: k }), p1, 'the same plan for the same key')
  t.equal(planFor({ definition_key: k }), p1, 'a key alone finds it')
  t.not(planFor({ definition: def('a') }), planFor({ definition: def('a') }), 'no key: compiled per run')
  t.equal(planFor({ definition_key: `${k}-other` }), undefined, 'an unknown key without a definition')
  t.same([...compilePlan(def('a')).nodes.keys()], ['trg', 'reply'])
})

t.test('the cache is bounded: the least recently used plan goes first', async t => {
  const prefix = `lru-${Math.random()}`
  const first = planFor({ definition: def('0'), definition_key: `${prefix}-0` })
  for (let i = 1; i <= PLAN_CACHE_SIZE; i++) {
    planFor({ definition: def(String(i)), definition_key: `${prefix}-${i}` })
    if (i === 10) t.equal(planFor({ definition_key: `${prefix}-1` }) !== undefined, true, 'touched: now the most recent')
  }
  t.equal(planFor({ definition_key: `${prefix}-0` }), undefined, 'the oldest was evicted')
  t.not(planFor({ definition_key: `${prefix}-1` }), undefined, 'a recently used one stays')
  t.not(first, undefined)
})

t.test('runs: a cached plan answers; a key the worker lacks asks for the definition', async t => {
  const k = `run-${Math.random()}`
  let r = await runWorkflow(task({ definition: def('one'), definition_key: k }))
  t.match(r, { status: 'success', response: { status: 200, body: { tag: 'one', id: '5' } } })
  r = await runWorkflow(task({ definition_key: k, trigger_output: { request: { path_params: { id: '6' } } } }))
  t.match(r, { status: 'success', response: { body: { tag: 'one', id: '6' } } }, 'no definition sent: the plan runs')
  t.equal(r.nodes.length, 2)
  r = await runWorkflow(task({ definition_key: `${k}-unknown` }))
  t.equal(r.plan_missing, true)
  t.equal(r.response, null)
})

t.test('records: only what the caller will store comes back', async t => {
  let r = await runWorkflow(task({ definition: def('x'), records: 'never' }))
  t.match(r, { status: 'success', nodes: [], node_inputs: {}, response: { body: { tag: 'x' } } })
  r = await runWorkflow(task({ definition: def('x'), records: 'on_error' }))
  t.same(r.nodes, [], 'a success is not kept')
  const bad = { ...def('x'), nodes: [def('x').nodes[0], { id: 'reply', name: 'reply', type: 'response_node', settings: { status: '{{ 1 + }}' } }] } as WorkflowDefinition
  r = await runWorkflow(task({ definition: bad, records: 'on_error' }))
  t.equal(r.status, 'error')
  t.match(r.nodes.at(-1), { node_id: 'reply', status: 'error' }, 'a failure keeps its records')
  r = await runWorkflow(task({ definition: def('x') }))
  t.equal(r.nodes.length, 2, 'by default every record comes back')
})
