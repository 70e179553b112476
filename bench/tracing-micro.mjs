#!/usr/bin/env node
/**
 * node bench/tracing-micro.mjs: the tracing work of one forwarded request on the request path
 * (the SERVER span from the caller's traceparent, the backend call's CLIENT span and its
 * traceparent, the attributes, both ends), timed in-process without the network, for tracing
 * at 1 % and 100 %; then what encoding costs per span off the request path (batches of 512 with
 * the official OTLP protobuf and JSON serializers). Needs `npm run build`. The loaded-machine
 * noise of a whole-gateway run (bench/tracing.mjs) is far larger than these numbers.
 */
import { formatTraceparent } from '../dist/src/common/trace-context.js'
import { createEncoder } from '../dist/src/main/observability/tracing/encode.js'
import { createSampler } from '../dist/src/main/observability/tracing/sampler.js'
import { KIND } from '../dist/src/main/observability/tracing/span.js'
import { tracerOver } from '../dist/src/main/observability/tracing/tracer.js'

const N = Number(process.env.BENCH_N ?? 300_000)
const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
const queued = []
const exporter = { push: s => { if (queued.length < 4096) queued.push(s) }, shutdown: async () => {}, stats: { exported: 0, queueFull: 0, exportFailed: 0, queued: 0 } }

/** One request's tracing, as exchange.ts, forward.ts and gateway/spans.ts do it. */
function request (tracer, traceparent) {
  const span = tracer.startFromHeaders(traceparent, null, 'GET', KIND.server)
  const back = tracer.child(span, 'GET', KIND.client)
  if (back.sampled) {
    const a = back.attributes
    a['http.request.method'] = 'GET'; a['server.address'] = '127.0.0.1'; a['server.port'] = 18911
    a['url.full'] = 'http://127.0.0.1:18911/items/1'; a['gatehouse.upstream.target'] = 'http://127.0.0.1:18911'
  }
  const header = formatTraceparent(back.traceId, back.spanId, back.sampled)
  if (back.sampled) back.attributes['http.response.status_code'] = 200
  tracer.end(back)
  if (span.sampled) {
    const a = span.attributes
    a['http.request.method'] = 'GET'; a['url.path'] = '/api/items/1'; a['url.scheme'] = 'http'; a['server.address'] = 'localhost'
    a['client.address'] = '127.0.0.1'; a['gatehouse.request_id'] = 'b1946ac9-2ab8-4a9b-8f7c-3c3f0f6b0f6b'; a['user_agent.original'] = 'wrk'
    a['http.route'] = '/api/items/{id}'; a['gatehouse.proxy_id'] = 'bench-p'; a['gatehouse.collection_id'] = 'bench'; a['http.response.status_code'] = 200
    span.name = 'GET /api/items/{id}'
  }
  tracer.end(span)
  return header.length
}

function time (label, fn) {
  for (let i = 0; i < 20_000; i++) fn(i)
  const t0 = process.hrtime.bigint()
  let sink = 0
  for (let i = 0; i < N; i++) { sink += fn(i); if (queued.length >= 4096) queued.length = 0 }
  const ns = Number(process.hrtime.bigint() - t0) / N
  console.log(`${label}: ${(ns / 1000).toFixed(3)} µs per request${sink === -1 ? '!' : ''}`)
  return ns
}

const results = {}
for (let rep = 0; rep < 3; rep++) {
  for (const [label, ratio, tp] of [['1 %, no caller context', 0.01, null], ['100 %, no caller context', 1, null], ['parent-based, caller sampled', 0.01, CALLER]]) {
    const tracer = tracerOver(createSampler('parentbased_traceidratio', ratio), exporter)
    ;(results[label] ??= []).push(time(label, () => request(tracer, tp)))
  }
}
// The official SDK for the same work (its TracerProvider, a batch processor over an exporter that
// drops everything), so the in-house record's saving is a measurement, not a claim.
const sdk = await import('@opentelemetry/sdk-trace')
const api = await import('@opentelemetry/api')
const dropAll = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} }
for (const [label, ratio] of [['SDK 1 %', 0.01], ['SDK 100 %', 1]]) {
  const provider = new sdk.TracerProvider({
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: dropAll, maxQueueSize: 4096, scheduledDelayMillis: 5 })]
  })
  const t = provider.getTracer('gatehouse')
  const sdkRequest = () => {
    const server = t.startSpan('GET', { kind: api.SpanKind.SERVER })
    const back = t.startSpan('GET', { kind: api.SpanKind.CLIENT }, api.trace.setSpan(api.context.active(), server))
    back.setAttributes({ 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'server.port': 18911, 'url.full': 'http://127.0.0.1:18911/items/1', 'gatehouse.upstream.target': 'http://127.0.0.1:18911' })
    const c = back.spanContext()
    const header = formatTraceparent(c.traceId, c.spanId, (c.traceFlags & 1) === 1)
    back.setAttribute('http.response.status_code', 200)
    back.end()
    server.setAttributes({
      'http.request.method': 'GET', 'url.path': '/api/items/1', 'url.scheme': 'http', 'server.address': 'localhost', 'client.address': '127.0.0.1',
      'gatehouse.request_id': 'b1946ac9-2ab8-4a9b-8f7c-3c3f0f6b0f6b', 'user_agent.original': 'wrk', 'http.route': '/api/items/{id}',
      'gatehouse.proxy_id': 'bench-p', 'gatehouse.collection_id': 'bench', 'http.response.status_code': 200
    })
    server.updateName('GET /api/items/{id}')
    server.end()
    return header.length
  }
  const runs = []
  for (let rep = 0; rep < 3; rep++) {
    runs.push(time(label, sdkRequest))
    await new Promise(resolve => setTimeout(resolve, 20)) // lets the batch processor drain
  }
  results[label] = runs
  await provider.shutdown()
}

const spans = []
const tracer = tracerOver(createSampler('always_on', 1), { ...exporter, push: s => spans.push(s) })
for (let i = 0; i < 256; i++) request(tracer, null)
for (const protocol of ['http/protobuf', 'http/json']) {
  const encode = createEncoder(protocol, { 'service.name': 'gatehouse' })
  for (let i = 0; i < 20; i++) encode(spans)
  const t0 = process.hrtime.bigint()
  let bytes = 0
  for (let i = 0; i < 200; i++) bytes += encode(spans).length
  const ns = Number(process.hrtime.bigint() - t0) / (200 * spans.length)
  console.log(`encode ${protocol}: ${(ns / 1000).toFixed(3)} µs per span (${Math.round(bytes / 200 / spans.length)} bytes per span)`)
}
console.log('medians (µs per request): ' + Object.entries(results).map(([k, v]) => `${k} ${(v.sort((a, b) => a - b)[1] / 1000).toFixed(3)}`).join('; '))
