/**
 * Tracing through workflows, on the whole service (worker pool included): a workflow proxy with
 * two HTTP nodes and a cron-started run each export one span tree (received by a loopback OTLP
 * receiver, decoded with the official protobuf definitions); the HTTP nodes' backends get the
 * node run's span as parent; execution records and request log records carry the trace id,
 * and the request log filters by it.
 */
import t, { type Test } from 'tap'
import { startBackend } from '../../helpers/gateway.js'
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js'
import { startService } from '../workflows/service.js'

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

  const m = TRACEPARENT.exec(String(backend.seen[0].headers.traceparent))
  t.ok(m, 'the node sent a traceparent')
  // Spans of one run leave together with its run span.
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === m![1] && x.name.startsWith('workflow ')), 'the run span of that trace')
  const tree = spans.filter(s => s.traceId === m![1])
  oneTree(t, tree, '')
  const run = tree.find(s => s.name.startsWith('workflow '))!
  t.equal(run.parentSpanId, '', 'the run starts the trace')
  t.equal(run.attributes['gatehouse.execution.mode'], 'trigger')
  const call = tree.find(s => s.attributes['gatehouse.node.id'] === 'call')!
  t.equal(call.attributes['gatehouse.node.type'], 'http_request_node')
  t.equal(m![2], call.spanId, 'the backend call hangs under the node run')
  t.ok(tree.some(s => s.attributes['gatehouse.node.id'] === 'tick'), 'the trigger node has its span')
  const execs = await w.until(`/workflows/${p.workflow_id as string}/executions`, body => body.items?.some((e: any) => e.trace_id === m![1]))
  t.ok(execs.items.some((e: any) => e.trace_id === m![1] && e.mode === 'trigger'), 'the execution record of that run names its trace')
})
