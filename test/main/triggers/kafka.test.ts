/**
 * broker_consumer against librdkafka's mock cluster (the real Kafka protocol): the spec's outputs,
 * a failing run retried then reported (after_success) or run once (per_message), a broker outage
 * shown as failing and consumption resuming when the broker returns.
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
  await k.produce('events', [{ key: 'k1', value: '{"sku":"a"}', headers: { source: 'test' } }])
  const first = (await runsUntil(w, ok.workflow_id, 1))[0]
  t.same(Object.keys(first.trigger_output).sort(), ['headers', 'key', 'message', 'offset', 'partition', 'run_id', 'topic'], 'exactly the spec\'s outputs')
  t.match(first.trigger_output, { topic: 'events', partition: 0, offset: '0', key: 'k1', message: { sku: 'a' }, headers: { source: 'test' } })
  t.equal(first.trigger_output.run_id, first.id)
  await k.down(1)
  const down = await w.until(`/triggers/${ok.id as string}`, x => x.state === 'failing')
  t.equal(down.state, 'failing', 'an unreachable broker shows as failing')
  await k.up(1)
  let back: any
  for (let i = 0; i < 450; i++) {
    back = (await w.api('GET', `/triggers/${ok.id as string}`, undefined, 'viewer')).body
    if (back.state === 'running') break
    await sleep(200)
  }
  t.equal(back.state, 'running', `back to running once the broker returns (${JSON.stringify(back.last_error)})`)
  await k.produce('events', [{ value: '{"sku":"b"}' }])
  const after = await runsUntil(w, ok.workflow_id, 2)
  t.same(after.map(r => r.trigger_output.message.sku).sort(), ['a', 'b'], 'consumption resumed; nothing ran twice')
})

t.test("a message's traceparent header continues the producer's trace: the run is a CONSUMER span under it", async t => {
  const { startOtlpReceiver } = await import('../../helpers/otlp-receiver.js')
  const receiver = await startOtlpReceiver(t)
  const k = await startMockKafka({ traced: 1 })
  t.teardown(() => k.stop())
  const start = await instances(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const w = await start()
  const cred = await kafkaCredential(w, k.brokers)
  const p = await publishedProxy(w, 'http://127.0.0.1:9', 'ktrace')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: workflow(cred, 'traced'), enabled: true })).status, 200)
  const producer = { trace: '7d3f0a5c3e2b4c1d9e8f7a6b5c4d3e2f', span: '1a2b3c4d5e6f7a8b' }
  await k.produce('traced', [{ value: '{"sku":"t"}', headers: { traceparent: `00-${producer.trace}-${producer.span}-01` } }])
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === producer.trace && x.name.startsWith('workflow ')), "the run's span in the producer's trace")
  const run = spans.find(x => x.traceId === producer.trace && x.name.startsWith('workflow '))!
  t.equal(run.parentSpanId, producer.span, "the run's parent is the producer's span")
  t.equal(run.kind, 5, 'a CONSUMER span (OTLP kind 5)')
  t.ok(spans.some(x => x.traceId === producer.trace && x.parentSpanId === run.spanId && x.attributes['gatehouse.node.id'] === 'note'), 'its node runs are its children')
  const runs = await runsUntil(w, p.workflow_id, 1)
  t.equal(runs[0].trace_id, producer.trace, 'the execution record names the producer\'s trace')
})
