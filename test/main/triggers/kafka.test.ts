/**
 * broker_consumer against librdkafka's mock cluster (the real Kafka protocol), two instances on
 * PostgreSQL and Redis: the instances share the topic through one consumer group, one stops and
 * the other takes its partitions, no message lost and none run twice; a failing run is retried
 * then reported (after_success) or run once (per_message); a broker outage and its return.
 */
import t from 'tap'
import { startMockKafka } from '../../helpers/kafka.js'
import { edge, instances, node, publishedProxy, sleep, triggerRuns } from './cluster.js'
import type { WorkflowService } from '../workflows/service.js'

t.setTimeout(300_000)

async function kafkaCredential (w: WorkflowService, brokers: string[]): Promise<string> {
  const r = await w.api('POST', '/credentials', { name: `kafka-${Math.random().toString(36).slice(2)}`, type: 'kafka', config: { brokers } }, 'admin')
  if (r.status !== 201) throw new Error(`credential: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.id
}

const workflow = (credentialsId: string, topic: string, settings: Record<string, unknown> = {}, action = node('note', 'set_node', { values: { sku: '{{in.message.sku}}' } })) => ({
  nodes: [node('in', 'broker_consumer', { credentials_id: credentialsId, topic, ...settings }), action],
  edges: [edge('in', action.id)],
  runtime_settings: { save_on_success: true, save_on_error: true }
})

async function runsUntil (w: WorkflowService, workflowId: string, n: number, tries = 600): Promise<any[]> {
  for (let i = 0; i < tries; i++) {
    const runs = await triggerRuns(w, workflowId)
    if (runs.length >= n) return runs
    await sleep(100)
  }
  return await triggerRuns(w, workflowId)
}

const offsets = (runs: any[]) => runs.map(r => `${r.trigger_output.partition as number}:${r.trigger_output.offset as string}`).sort()

t.test('two instances share a consumer group; one stops, the other carries on; nothing lost, nothing twice', async t => {
  const k = await startMockKafka({ orders: 4 })
  t.teardown(() => k.stop())
  const start = await instances(t, 'postgres', { CACHE_TYPE: 'redis' })
  const a = await start()
  const b = await start()
  const p = await publishedProxy(a, 'http://127.0.0.1:9', 'kafka2')
  const cred = await kafkaCredential(a, k.brokers)
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: workflow(cred, 'orders'), enabled: true })).status, 200)
  await a.until(`/triggers/${p.id as string}`, h => h.state === 'running')

  await k.produce('orders', Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ sku: `s${i}` }), headers: { source: 'test' } })))
  let runs = await runsUntil(a, p.workflow_id, 20)
  t.equal(runs.length, 20, 'every message ran')
  t.equal(new Set(offsets(runs)).size, 20, 'none twice')
  const out = runs[0].trigger_output
  t.same(Object.keys(out).sort(), ['headers', 'key', 'message', 'offset', 'partition', 'run_id', 'topic'], 'exactly the spec\'s outputs')
  t.match(out, { topic: 'orders', key: /^k\d+$/, message: { sku: /^s\d+$/ }, headers: { source: 'test' } })
  t.equal(out.run_id, runs[0].id)
  t.match(runs.find(r => r.trigger_output.key === 'k3'), { status: 'success', nodes: [{ node_id: 'in' }, { node_id: 'note', output: { output: { sku: 's3' } } }] })

  // A stops; B takes every partition over after the rebalance and consumes what comes next.
  await a.s.close()
  await k.produce('orders', Array.from({ length: 20 }, (_, i) => ({ key: `m${i}`, value: JSON.stringify({ sku: `t${i}` }) })))
  runs = await runsUntil(b, p.workflow_id, 40)
  await sleep(2000)
  runs = await triggerRuns(b, p.workflow_id)
  t.equal(runs.length, 40, 'all 40 messages ran after the takeover')
  t.equal(new Set(offsets(runs)).size, 40, 'and none twice')
  const h = await b.until(`/triggers/${p.id as string}`, x => x.state === 'running')
  t.ok(h.lag === null || h.lag === 0, 'no lag left')
})

t.test('commit modes with a failing run; a broker outage and its return', async t => {
  const k = await startMockKafka({ jobs: 1, events: 1 })
  t.teardown(() => k.stop())
  const start = await instances(t, 'embedded')
  const w = await start()
  const cred = await kafkaCredential(w, k.brokers)
  // A run that always fails: the http request goes to a port nothing listens on.
  const failing = node('call', 'http_request_node', { url: 'http://127.0.0.1:9/', timeout_ms: 2000 })
  const retried = await publishedProxy(w, 'http://127.0.0.1:9', 'kretry')
  const once = await publishedProxy(w, 'http://127.0.0.1:9', 'konce')
  t.equal((await w.api('PUT', `/proxies/${retried.id as string}/workflow`, { workflow: workflow(cred, 'jobs', { consumer_group: 'g-retry' }, failing), enabled: true })).status, 200)
  t.equal((await w.api('PUT', `/proxies/${once.id as string}/workflow`, { workflow: workflow(cred, 'jobs', { consumer_group: 'g-once', commit_mode: 'per_message' }, failing), enabled: true })).status, 200)
  await k.produce('jobs', [{ value: '{"n":1}' }])
  const r1 = await runsUntil(w, retried.workflow_id, 3)
  const r2 = await runsUntil(w, once.workflow_id, 1)
  await sleep(3000)
  t.equal((await triggerRuns(w, retried.workflow_id)).length, 3, 'after_success: the failed run was retried, 3 runs in all, then no more')
  t.ok(r1.every(r => r.status === 'error'))
  t.equal((await triggerRuns(w, once.workflow_id)).length, 1, 'per_message: run once, committed whatever the result')
  t.equal(r2[0].status, 'error')
  const h = await w.until(`/triggers/${retried.id as string}`, x => x.last_error !== null && /failed 3 times/.test(String(x.last_error)))
  t.match(h.last_error, /jobs\[0\] offset 0 failed 3 times/, 'the failure is visible in trigger health')

  // An outage: the broker goes down, the trigger reports failing; it comes back and consumption resumes.
  const ok = await publishedProxy(w, 'http://127.0.0.1:9', 'kok')
  t.equal((await w.api('PUT', `/proxies/${ok.id as string}/workflow`, { workflow: workflow(cred, 'events'), enabled: true })).status, 200)
  await k.produce('events', [{ value: '{"sku":"a"}' }])
  await runsUntil(w, ok.workflow_id, 1)
  await k.down(1)
  const down = await w.until(`/triggers/${ok.id as string}`, x => x.state === 'failing')
  t.equal(down.state, 'failing', 'an unreachable broker shows as failing')
  await k.up(1)
  await w.until(`/triggers/${ok.id as string}`, x => x.state === 'running')
  await k.produce('events', [{ value: '{"sku":"b"}' }])
  const after = await runsUntil(w, ok.workflow_id, 2)
  t.same(after.map(r => r.trigger_output.message.sku).sort(), ['a', 'b'], 'consumption resumed; nothing ran twice')
})
