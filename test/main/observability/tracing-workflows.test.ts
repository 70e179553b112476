/**
 * Tracing through workflows, on the whole service (worker pool included): a workflow proxy with
 * two HTTP nodes and a cron-started run each export one span tree (received by a loopback OTLP
 * receiver, decoded with the official protobuf definitions); the HTTP nodes' backends get the
 * node run's span as parent; execution records and request log records carry the trace id,
 * and the request log filters by it. A run started by a delivered mail (Dovecot) and runs started
 * from the management API (manual, test) are traces of their own, named by their trigger.
 */
import t, { type Test } from 'tap'
import { startBackend } from '../../helpers/gateway.js'
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js'
import { startService } from '../workflows/service.js'
import { startDovecot } from '../../helpers/dovecot.js'
import { eml, imapCredential, imapWorkflow } from '../triggers/imap-helpers.js'

t.setTimeout(300_000)

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/

/** Every span's parent is in the set, except the root's (which is `rootParent`). */
function oneTree (t: Test, spans: ReceivedSpan[], rootParent: string): void {
  const ids = new Set(spans.map(s => s.spanId))
  const roots = spans.filter(s => !ids.has(s.parentSpanId))
  t.equal(roots.length, 1, `one root: ${roots.map(r => r.name).join(', ')}`)
  t.equal(roots[0]?.parentSpanId, rootParent, 'the root hangs where it should')
  t.equal(new Set(spans.map(s => s.traceId)).size, 1, 'one trace id')
}

t.test('a workflow proxy with two HTTP nodes: one span tree from the caller through the nodes to the backends', async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const w = await startService(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const p = await w.proxy('/orders/{id}', ['GET'])
  const workflow = {
    nodes: [
      { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
      { id: 'a', name: 'user', type: 'http_request_node', settings: { url: `${backend.url}/users/{{trigger.params.id}}`, headers: { traceparent: 'not mine' } } },
      { id: 'b', name: 'stock', type: 'http_request_node', settings: { url: `${backend.url}/stock` } },
      { id: 'r', name: 'answer', type: 'response_node', settings: { status: 200, body: { user: '{{user.response.status}}', stock: '{{stock.response.status}}' } } }
    ],
    edges: [{ id: '1', source: 'trg', target: 'a' }, { id: '2', source: 'a', target: 'b' }, { id: '3', source: 'b', target: 'r' }],
    runtime_settings: { timeout_ms: 30000, save_on_success: true }
  }
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow, enabled: true })).status, 200)

  const caller = { trace: '0af7651916cd43dd8448eb211c80319c', span: 'b7ad6b7169203331' }
  const r = await fetch(`${w.gateway}${p.base as string}/orders/42`, { headers: { traceparent: `00-${caller.trace}-${caller.span}-01`, connection: 'close' } })
  t.equal(r.status, 200)
  t.same(await r.json(), { user: 200, stock: 200 })

  t.equal(backend.seen.length, 2)
  const sent = backend.seen.map(s => TRACEPARENT.exec(String(s.headers.traceparent)))
  t.ok(sent.every(m => m !== null && m[1] === caller.trace), 'both HTTP nodes sent the caller\'s trace id, sampled')
  t.not(sent[0]![2], sent[1]![2], 'each node run is its own parent')

  const spans = await receiver.waitFor(s => s.length >= 6, 'server, run and four node spans')
  const tree = spans.filter(s => s.traceId === caller.trace)
  oneTree(t, tree, caller.span)
  const server = tree.find(s => s.kind === 2)!
  t.equal(server.name, `GET ${p.base as string}/orders/{id}`)
  const run = tree.find(s => s.name.startsWith('workflow '))!
  t.equal(run.parentSpanId, server.spanId, 'the run is a child of the request')
  t.equal(run.attributes['gatehouse.execution.status'], 'success')
  t.equal(run.attributes['gatehouse.execution.trigger'], 'http')
  const nodes = tree.filter(s => s.attributes['gatehouse.node.id'] !== undefined)
  t.same(nodes.map(s => s.attributes['gatehouse.node.id']).sort(), ['a', 'b', 'r', 'trg'], 'a span per node run')
  t.ok(nodes.every(s => s.parentSpanId === run.spanId), 'node spans are children of the run')
  t.ok(nodes.every(s => s.attributes['gatehouse.node.status'] === 'success' && typeof s.attributes['gatehouse.node.type'] === 'string'), 'node id, type and status')
  const a = nodes.find(s => s.attributes['gatehouse.node.id'] === 'a')!
  const b = nodes.find(s => s.attributes['gatehouse.node.id'] === 'b')!
  t.equal(sent[0]![2], a.spanId, "the first backend's parent is node a's span")
  t.equal(sent[1]![2], b.spanId, "the second backend's parent is node b's span")
  t.ok(b.startNs >= a.endNs, 'b ran after a')

  const execs = await w.until(`/workflows/${p.workflow_id as string}/executions`, body => body.items?.length >= 1)
  t.equal(execs.items[0].trace_id, caller.trace, 'the execution record names the trace')
  const logs = await w.until(`/request-logs?trace_id=${caller.trace}`, body => body.items?.length >= 1)
  t.equal(logs.items[0].trace_id, caller.trace, 'the request log record names the trace, and filters by it')
  t.equal((await w.api('GET', `/request-logs?trace_id=${'f'.repeat(32)}`, undefined, 'viewer')).body.items.length, 0, 'another trace: nothing')
  t.equal((await w.api('GET', '/request-logs?trace_id=nope', undefined, 'viewer')).status, 400, 'not a trace id: 400')
})

t.test('a cron-started run is a trace of its own: the run span as root, node spans, the backend under its node', async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const w = await startService(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const p = await w.proxy('/tick', ['POST'])
  const workflow = {
    nodes: [
      { id: 'tick', name: 'tick', type: 'cron_trigger', settings: { cron_expression: '*/1 * * * * *' } },
      { id: 'call', name: 'call', type: 'http_request_node', settings: { method: 'POST', url: `${backend.url}/ping`, body: { type: 'json', content: { at: '{{tick.triggered_at}}' } } } }
    ],
    edges: [{ id: '1', source: 'tick', target: 'call' }],
    runtime_settings: { timeout_ms: 30000, save_on_success: true }
  }
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow, enabled: true })).status, 200)
  await receiver.waitFor(s => s.some(x => x.attributes['gatehouse.node.id'] === 'call'), 'a cron run\'s spans')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: false })).status, 200)

  const m = TRACEPARENT.exec(String(backend.seen[0]?.headers.traceparent))
  t.ok(m, 'the node sent a traceparent')
  // Spans of one run leave together with its run span.
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === m![1] && x.name.startsWith('workflow ')), 'the run span of that trace')
  const tree = spans.filter(s => s.traceId === m![1])
  oneTree(t, tree, '')
  const run = tree.find(s => s.name.startsWith('workflow '))!
  t.equal(run.parentSpanId, '', 'the run starts the trace')
  t.equal(run.attributes['gatehouse.execution.mode'], 'trigger')
  t.equal(run.attributes['gatehouse.execution.trigger'], 'cron')
  const call = tree.find(s => s.attributes['gatehouse.node.id'] === 'call')!
  t.equal(call.attributes['gatehouse.node.type'], 'http_request_node')
  t.equal(m![2], call.spanId, 'the backend call hangs under the node run')
  t.ok(tree.some(s => s.attributes['gatehouse.node.id'] === 'tick'), 'the trigger node has its span')
  const execs = await w.until(`/workflows/${p.workflow_id as string}/executions`, body => body.items?.some((e: any) => e.trace_id === m![1]))
  t.ok(execs.items.some((e: any) => e.trace_id === m![1] && e.mode === 'trigger'), 'the execution record of that run names its trace')
})

t.test('an IMAP-started run: a delivered mail gives a trace of its own, the run span as root with the node spans under it', async t => {
  const receiver = await startOtlpReceiver(t)
  const d = await startDovecot()
  t.teardown(() => d.stop())
  const w = await startService(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const p = await w.proxy('/mail', ['POST'])
  const cred = await imapCredential(w, d)
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: imapWorkflow(cred, { poll_interval_seconds: 1 }), enabled: true })).status, 200)
  await w.until(`/triggers/${p.id as string}`, h => h.state === 'running')
  await d.deliver(eml(7))
  const spans = await receiver.waitFor(s => s.some(x => x.name.startsWith('workflow ') && x.attributes['gatehouse.execution.trigger'] === 'imap'), 'the IMAP run\'s span')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: false })).status, 200)
  const run = spans.find(x => x.name.startsWith('workflow ') && x.attributes['gatehouse.execution.trigger'] === 'imap')!
  const tree = spans.filter(s => s.traceId === run.traceId)
  oneTree(t, tree, '')
  t.match(run.attributes, { 'gatehouse.execution.mode': 'trigger', 'gatehouse.execution.status': 'success', 'gatehouse.workflow.id': p.workflow_id })
  const nodes = tree.filter(s => s.attributes['gatehouse.node.id'] !== undefined)
  t.same(nodes.map(s => s.attributes['gatehouse.node.id']).sort(), ['mail', 'note'], 'the trigger node and the set node')
  t.ok(nodes.every(s => s.parentSpanId === run.spanId && s.attributes['gatehouse.node.status'] === 'success'), 'under the run span')
  const execs = await w.until(`/workflows/${p.workflow_id as string}/executions`, body => body.items?.some((e: any) => e.trace_id === run.traceId))
  t.ok(execs.items.some((e: any) => e.trace_id === run.traceId && e.trigger_output?.uid === 1), 'the execution record of that mail names the trace')
})

t.test('runs started from the management API are traces of their own, trigger manual', async t => {
  const receiver = await startOtlpReceiver(t)
  const w = await startService(t, 'embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const p = await w.proxy('/by-hand', ['POST'])
  const workflow = {
    nodes: [{ id: 'go', name: 'go', type: 'manual_trigger', settings: {} }, { id: 'shape', name: 'shape', type: 'set_node', settings: { values: { ok: true } } }],
    edges: [{ id: '1', source: 'go', target: 'shape' }],
    runtime_settings: { timeout_ms: 30000, save_on_success: true }
  }
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow })).status, 200)
  const manual = await w.api('POST', `/workflows/${p.workflow_id as string}/manual-run`, {})
  t.equal(manual.status, 200)
  const test = await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: {} })
  t.equal(test.status, 200)
  t.match(manual.body.trace_id, /^[0-9a-f]{32}$/, 'the manual run\'s record names its trace')
  t.not(manual.body.trace_id, test.body.trace_id, 'each run its own trace')
  const spans = await receiver.waitFor(s => s.filter(x => x.name.startsWith('workflow ')).length >= 2, 'two run spans')
  for (const [record, mode] of [[manual.body, 'manual'], [test.body, 'test']] as const) {
    const tree = spans.filter(s => s.traceId === record.trace_id)
    oneTree(t, tree, '')
    const run = tree.find(s => s.name.startsWith('workflow '))!
    t.match(run.attributes, { 'gatehouse.execution.trigger': 'manual', 'gatehouse.execution.mode': mode, 'gatehouse.execution.id': record.id }, `the ${mode} run: a root span, trigger manual`)
    t.same(tree.filter(s => s.parentSpanId === run.spanId).map(s => s.attributes['gatehouse.node.id']).sort(), ['go', 'shape'], 'its node spans under it')
  }
})
