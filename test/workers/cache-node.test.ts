import t, { type Test } from 'tap'
import { createWorkflowPool } from '../../src/main/workflows/pool.js'
import { createMemoryKv } from '../../src/main/cache/memory-kv.js'
import { createRedisKv } from '../../src/main/cache/redis-kv.js'
import type { KeyValueCache } from '../../src/main/cache/types.js'
import type { WorkflowDefinition } from '../../src/common/types.js'
import { runWorkflow } from '../../src/workers/engine/run.js'
import { testRedis } from '../main/cache/shared.js'
import { task } from '../helpers/workflow-task.js'

// Runs go through the real pool: cache requests travel from the worker to the main thread.
const pool = createWorkflowPool(1)
t.teardown(() => pool.close())

/** get key → hit: reply from cache / miss: compute, set with a TTL, reply. */
const cached = (ttl: unknown = 60): WorkflowDefinition => ({
  nodes: [
    { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 'g', name: 'lookup', type: 'cache_lookup_node', settings: { operation: 'get', key: 'user:{{ trigger.id }}' } },
    { id: 'hit', name: 'fromCache', type: 'response_node', settings: { status: 200, headers: { 'x-cache': 'hit' }, body: '{{ lookup.value }}' } },
    { id: 'mk', name: 'compute', type: 'set_node', settings: { values: { id: '{{ trigger.id }}', at: 'computed' } } },
    { id: 's', name: 'store', type: 'cache_lookup_node', settings: { operation: 'set', key: 'user:{{ trigger.id }}', value: '{{ compute.output }}', ttl_seconds: ttl } },
    { id: 'miss', name: 'fresh', type: 'response_node', settings: { status: 200, headers: { 'x-cache': 'miss' }, body: '{{ store.value }}' } }
  ],
  edges: [
    { id: '1', source: 't', target: 'g' },
    { id: '2', source: 'g', target: 'hit', sourceHandle: 'hit' },
    { id: '3', source: 'g', target: 'mk', sourceHandle: 'miss' },
    { id: '4', source: 'mk', target: 's' },
    { id: '5', source: 's', target: 'miss' }
  ]
})

async function contract (t: Test, kv: KeyValueCache): Promise<void> {
  const id = `u${Math.random().toString(36).slice(2)}`
  let r = await pool.run(task(cached(), { trigger_output: { id } }), { kv })
  t.equal(r.status, 'success', r.error?.message ?? 'the run succeeds')
  t.equal(r.response?.headers['x-cache'], 'miss')
  t.same(r.response?.body, { id, at: 'computed' })
  t.same(r.nodes.find(n => n.node_id === 'g')?.output, { hit: false, value: null })
  r = await pool.run(task(cached(), { trigger_output: { id } }), { kv })
  t.equal(r.response?.headers['x-cache'], 'hit', 'the second run finds the value')
  t.same(r.response?.body, { id, at: 'computed' })
  t.same(await kv.get(`workflow-cache:user:${id}`), { id, at: 'computed' }, 'stored under the workflow-cache: prefix')
  // A short TTL expires.
  const id2 = `${id}-short`
  await pool.run(task(cached(0.2), { trigger_output: { id: id2 } }), { kv })
  await new Promise(resolve => setTimeout(resolve, 600))
  r = await pool.run(task(cached(), { trigger_output: { id: id2 } }), { kv })
  t.equal(r.response?.headers['x-cache'], 'miss', 'expired after ttl_seconds')
}

t.test('memory cache', async t => { await contract(t, createMemoryKv()) })
t.test('Redis cache', async t => {
  const { redis, prefix } = await testRedis(t, 'wfcache')
  await contract(t, createRedisKv(redis, prefix))
})

t.test('a cache fault is a node error, not a crash', async t => {
  const broken: KeyValueCache = { get: async () => { throw new Error('Connection is closed.') }, set: async () => {}, delete: async () => false }
  const r = await pool.run(task(cached(), { trigger_output: { id: 'x' } }), { kv: broken })
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'g')
  t.match(r.error?.message, /Cache node 'lookup': The cache failed: Connection is closed/)
})

t.test('without a cache, and with bad settings, the error names the node', async t => {
  let r = await runWorkflow(task(cached(), { trigger_output: { id: 'x' } }))
  t.equal(r.status, 'error')
  t.match(r.error?.message, /Cache node 'lookup' needs the shared cache/)
  r = await pool.run(task(cached(-1), { trigger_output: { id: 'x' } }), { kv: createMemoryKv() })
  t.match(r.error?.message, /Cache node 'store': ttl_seconds must be/)
  const def = cached()
  def.nodes[1]!.settings = { operation: 'delete', key: 'k' }
  r = await pool.run(task(def, { trigger_output: { id: 'x' } }), { kv: createMemoryKv() })
  t.match(r.error?.message, /operation must be get or set/)
  def.nodes[1]!.settings = { operation: 'get', key: '{{ trigger.nothing }}' }
  r = await pool.run(task(def, { trigger_output: { id: 'x' } }), { kv: createMemoryKv() })
  t.match(r.error?.message, /needs a key/)
})

t.test('a pinned lookup follows its hit handle', async t => {
  const r = await pool.run(task(cached(), { trigger_output: { id: 'x' }, pinned_outputs: { g: { hit: true, value: 'pinned' } } }), { kv: createMemoryKv() })
  t.same(r.response?.body, 'pinned')
})
