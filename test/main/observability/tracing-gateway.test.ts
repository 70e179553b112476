/**
 * Tracing on the forwarding path: W3C trace context to the backend with the gateway's span as
 * parent, the spans a loopback OTLP receiver decodes (official protobuf definitions, and JSON),
 * the sampler's treatment of a caller's flag, trace ids in error bodies, a slow or down
 * collector that delays no request and has its drops counted, a span per backend attempt on a
 * balanced upstream, and the spans of cache lookups and of access decisions that wait on Redis.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { createGateway } from '../../../src/main/gateway/index.js'
import { createTracer, type Tracer } from '../../../src/main/observability/tracing/tracer.js'
import { balancedCollection, collection, GATEWAY_SERVER, proxy, startBackend } from '../../helpers/gateway.js'
import { silentLogger } from '../../helpers/db.js'
import { profile } from '../../helpers/access.js'
import { requireService, TEST_REDIS_URL } from '../../helpers/services.js'
import { createRedis, whenRedisReady } from '../../../src/main/cache/redis.js'
import { createRedisLimiter } from '../../../src/main/cache/redis-limiter.js'
import { createRedisStore } from '../../../src/main/gateway/responses/cache-store.js'
import { ResponseCache } from '../../../src/main/gateway/responses/response-cache.js'
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js'

interface T { teardown (fn: () => unknown): void }

async function tracedGateway (t: T, otel: Record<string, string>): Promise<{ url: string, tracer: Tracer, gateway: ReturnType<typeof createGateway> }> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '3000', OTEL_BSP_SCHEDULE_DELAY: '50', GATEWAY_SERVER, ...otel })
  const tracer = createTracer(config, silentLogger)!
  const gateway = createGateway({ config, logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }), tracer })
  const { port } = await gateway.listen()
  t.teardown(async () => { await gateway.close(); await tracer.shutdown() })
  return { url: `http://127.0.0.1:${port}`, tracer, gateway }
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
const SERVER = 2 // OTLP's SPAN_KIND_SERVER (the API's SpanKind + 1)
const CLIENT = 3

t.test("a caller's traceparent reaches the backend in the same trace, under the gateway's span", async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const { url, gateway } = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url + '/' })
  const c = collection({ base_path: '/shop', upstream_url: backend.url + '/api' })
  gateway.setRoutes([c], [proxy(c, { path: '/items/{id}', target_path: '/items/{id}' })])

  const r = await fetch(`${url}/shop/items/7?secret=1`, {
    headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc', 'user-agent': 'trace-test/1', connection: 'close' }
  })
  t.equal(r.status, 200)
  await r.text()
  const seen = backend.seen[0]?.headers ?? {}
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(seen.traceparent))
  t.ok(m, `the backend got a sampled traceparent: ${seen.traceparent}`)
  t.equal(m![1], CALLER_TRACE, 'same trace id as the caller')
  t.not(m![2], CALLER_SPAN, "the parent is the gateway's span, not the caller's")
  t.equal(seen.tracestate, 'vendor=abc', 'tracestate passed on')

  const spans = await receiver.waitFor(s => s.length >= 2, 'the server and backend spans')
  t.match(receiver.requests[0]?.contentType, 'application/x-protobuf', 'protobuf by default')
  const server = spans.find(s => s.kind === SERVER)!
  const client = spans.find(s => s.kind === CLIENT)!
  t.equal(server.traceId, CALLER_TRACE)
  t.equal(server.parentSpanId, CALLER_SPAN, "the server span's parent is the caller's span")
  t.equal(server.name, 'GET /shop/items/{id}')
  t.match(server.attributes, {
    'http.request.method': 'GET', 'http.route': '/shop/items/{id}', 'http.response.status_code': 200, 'url.path': '/shop/items/7',
    'server.address': '127.0.0.1', 'client.address': '127.0.0.1', 'user_agent.original': 'trace-test/1'
  })
  t.equal(server.status.code, 0, 'unset status on success')
  t.equal(server.resource['service.name'], 'gatehouse')
  t.equal(client.parentSpanId, server.spanId, 'the backend call is a child of the server span')
  t.equal(client.spanId, m![2], "the backend's parent id is the backend call's span")
  t.equal(client.attributes['url.full'], `${backend.url}/api/items/7`, 'the target, without the query')
  t.equal(client.attributes['http.response.status_code'], 200)
  t.ok(server.endNs >= client.endNs && client.startNs >= server.startNs, 'the backend call lies within the request')
})

t.test('without a caller context the gateway starts the trace; error bodies and the backend carry it', async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t, (_req, res) => { res.writeHead(503).end('down') })
  const { url, gateway } = await tracedGateway(t, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url + '/v1/traces', OTEL_SERVICE_NAME: 'edge-gw', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s%20ecret' })
  const c = collection({ base_path: '/b', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/x' })])

  const r = await fetch(`${url}/b/x`, { headers: { connection: 'close' } })
  t.equal(r.status, 503)
  await r.text()
  const tp = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(backend.seen[0]?.headers.traceparent))
  t.ok(tp, 'a new sampled trace (default ratio 1.0)')

  const nf = await fetch(`${url}/nowhere`, { headers: { connection: 'close' } })
  t.equal(nf.status, 404)
  const body = await nf.json() as { request_id: string, trace_id: string }
  t.match(body.trace_id, /^[0-9a-f]{32}$/, 'the error body names its trace beside request_id')
  t.equal(body.request_id, nf.headers.get('x-request-id'))

  const spans = await receiver.waitFor(s => s.filter(x => x.kind === SERVER).length >= 2, 'two server spans')
  t.match(receiver.requests[0]?.contentType, 'application/json', 'OTLP JSON when asked')
  t.equal(receiver.requests[0]?.headers['x-api-key'], 's ecret', 'OTEL_EXPORTER_OTLP_HEADERS sent, percent-decoded')
  const first = spans.find(s => s.kind === SERVER && s.traceId === tp![1])!
  t.equal(first.parentSpanId, '', 'a root span')
  t.equal(first.resource['service.name'], 'edge-gw')
  t.equal(first.status.code, 2, 'a 5xx answer is an error on the server span')
  t.equal(first.attributes['error.type'], '503')
  const missing = spans.find(s => s.kind === SERVER && s.traceId === body.trace_id)!
  t.ok(missing, 'the 404 has its span under the trace id of its body')
  t.equal(missing.attributes['http.response.status_code'], 404)
  t.equal(missing.status.code, 0, 'a 4xx is not a server error')
})

t.test("a caller's sampled flag counts only under a parent-based sampler", async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const parentBased = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER_ARG: '0' })
  const ratioOnly = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })
  const c = collection({ base_path: '/s', upstream_url: backend.url })
  for (const g of [parentBased, ratioOnly]) g.gateway.setRoutes([c], [proxy(c, { path: '/x' })])
  const call = async (base: string, traceId: string, flags: string) => {
    const r = await fetch(`${base}/s/x`, { headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-${flags}`, connection: 'close' } })
    await r.text()
    return String(backend.seen.at(-1)?.headers.traceparent)
  }
  const a = 'a'.repeat(32)
  const b = 'b'.repeat(32)
  const d = 'd'.repeat(32)
  t.match(await call(parentBased.url, a, '01'), new RegExp(`^00-${a}-[0-9a-f]{16}-01$`), 'parentbased: the caller sampled, so do we')
  t.match(await call(parentBased.url, d, '00'), new RegExp(`^00-${d}-[0-9a-f]{16}-00$`), 'parentbased: the caller did not sample: neither do we, and say so')
  t.match(await call(ratioOnly.url, b, '01'), new RegExp(`^00-${b}-[0-9a-f]{16}-00$`), 'traceidratio 0: the caller cannot force sampling')
  await receiver.waitFor(s => s.some(x => x.traceId === a), 'the sampled trace')
  // One more sampled request flushed after the others: anything of b or d would have come with or before it.
  await call(parentBased.url, 'e'.repeat(32), '01')
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === 'e'.repeat(32)), 'the last sampled trace')
  t.notOk(spans.some((x: ReceivedSpan) => x.traceId === b || x.traceId === d), 'unsampled traces are not exported')
  t.notOk(spans.some((x: ReceivedSpan) => x.traceId === b), 'no span of the forced trace')
})

t.test('a slow or down collector delays no request; its drops are counted', async t => {
  const receiver = await startOtlpReceiver(t)
  receiver.hold = true
  const backend = await startBackend(t)
  const slow = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5', OTEL_EXPORTER_OTLP_TIMEOUT: '600000' })
  // A port nothing listens on: every export fails at once.
  const down = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' })
  const c = collection({ base_path: '/s', upstream_url: backend.url })
  for (const g of [slow, down]) g.gateway.setRoutes([c], [proxy(c, { path: '/x' })])
  for (const g of [slow, down]) {
    for (let i = 0; i < 60; i++) {
      // Generous: a request waiting on the collector would never answer while it holds.
      const r = await fetch(`${g.url}/s/x`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(30_000) })
      t.equal(r.status, 200)
      await r.text()
    }
  }
  t.match(slow.tracer.prometheus(), /gatehouse_tracing_spans_dropped_total\{reason="queue_full"\} (\d{2,})/, 'a held collector: the queue fills and spans are dropped')
  const dropped = Number(/gatehouse_tracing_spans_dropped_total\{reason="queue_full"\} (\d+)/.exec(slow.tracer.prometheus())![1])
  t.ok(dropped >= 120 - 10 - 5 - 10, `most of 120 spans dropped (${dropped})`)
  t.match(slow.tracer.prometheus(), /gatehouse_tracing_queue_spans (\d+)/)
  const until = Date.now() + 60_000
  while (!/reason="export_failed"\} [1-9]/.test(down.tracer.prometheus()) && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 100))
  t.match(down.tracer.prometheus(), /gatehouse_tracing_spans_dropped_total\{reason="export_failed"\} [1-9]\d*/, 'a down collector: failed exports counted')
  t.match(down.tracer.prometheus(), /gatehouse_tracing_spans_exported_total 0/)
})

t.test("a balanced upstream's retry: each attempt is its own CLIENT span under the server span, with its resend count", async t => {
  const receiver = await startOtlpReceiver(t)
  let calls = 0
  // Fails its first call (503), then answers.
  const flaky = await startBackend(t, (_req, res) => { if (calls++ === 0) res.writeHead(503).end('busy'); else res.end('fine') })
  const { url, gateway } = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  const c = balancedCollection([{ url: flaky.url }], { retries: { attempts: 2, budget_percent: 100 }, health_checks: { passive: null } }, { base_path: '/lb' })
  gateway.setRoutes([c], [proxy(c, { path: '/x' })])
  const r = await fetch(`${url}/lb/x`, { headers: { connection: 'close' } })
  t.equal(r.status, 200, 'the retry answered')
  t.equal(await r.text(), 'fine')
  t.equal(flaky.seen.length, 2, 'two attempts reached the backend')
  const spans = await receiver.waitFor(s => s.some(x => x.kind === SERVER) && s.filter(x => x.kind === CLIENT).length >= 2, 'a server span and two attempt spans')
  const server = spans.find(x => x.kind === SERVER)!
  const attempts = spans.filter(x => x.kind === CLIENT).sort((a, b) => Number(a.startNs - b.startNs))
  t.equal(attempts.length, 2, 'one span per attempt')
  t.ok(attempts.every(a => a.parentSpanId === server.spanId && a.traceId === server.traceId), 'siblings under the server span')
  const port = Number(new URL(flaky.url).port)
  t.match(attempts[0]!.attributes, { 'http.response.status_code': 503, 'error.type': '503', 'server.address': '127.0.0.1', 'server.port': port, 'gatehouse.upstream.target': flaky.url })
  t.equal(attempts[0]!.attributes['http.request.resend_count'], undefined, 'the first attempt is no resend')
  t.equal(attempts[0]!.status.code, 2, 'the failed attempt is an error')
  t.match(attempts[1]!.attributes, { 'http.request.resend_count': 1, 'http.response.status_code': 200, 'server.address': '127.0.0.1', 'server.port': port })
  t.equal(attempts[1]!.attributes['error.type'], undefined)
  for (let i = 0; i < 2; i++) {
    t.equal(flaky.seen[i]!.headers.traceparent, `00-${server.traceId}-${attempts[i]!.spanId}-01`, `attempt ${i + 1}: the backend got that attempt's traceparent`)
  }
})

t.test('a target that cannot be reached: its attempt span says connect, the next target answers', async t => {
  const receiver = await startOtlpReceiver(t)
  const good = await startBackend(t)
  const { url, gateway } = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  // Round robin from the first target: the closed port is tried first.
  const c = balancedCollection([{ url: 'http://127.0.0.1:9' }, { url: good.url }], { retries: { attempts: 1, budget_percent: 100 }, health_checks: { passive: null } }, { base_path: '/lb2' })
  gateway.setRoutes([c], [proxy(c, { path: '/x' })])
  let spans: ReceivedSpan[] = []
  for (let i = 0; i < 2; i++) {
    const r = await fetch(`${url}/lb2/x`, { headers: { connection: 'close' } })
    t.equal(r.status, 200)
    await r.text()
  }
  spans = await receiver.waitFor(s => s.filter(x => x.kind === CLIENT && x.attributes['error.type'] === 'connect').length >= 1 && s.filter(x => x.kind === SERVER).length >= 2, 'a connect failure span')
  const failed = spans.find(x => x.kind === CLIENT && x.attributes['error.type'] === 'connect')!
  t.match(failed.attributes, { 'server.port': 9, 'gatehouse.upstream.target': 'http://127.0.0.1:9' })
  t.equal(failed.attributes['http.response.status_code'], undefined, 'no answer, no status')
  const sibling = spans.find(x => x.kind === CLIENT && x.parentSpanId === failed.parentSpanId && x.spanId !== failed.spanId)!
  t.match(sibling.attributes, { 'http.request.resend_count': 1, 'http.response.status_code': 200, 'gatehouse.upstream.target': good.url })
})

t.test('response cache lookups: a span per lookup saying miss, then hit', async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t, (_req, res) => { res.setHeader('cache-control', 'max-age=60'); res.end('cached body') })
  const { url, gateway } = await tracedGateway(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  const c = collection({ base_path: '/cached', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/x', cache: { ttl_s: 60, vary: [], shared: true } })])
  for (const expected of ['gatehouse; fwd=uri-miss; stored', 'gatehouse; hit']) {
    const r = await fetch(`${url}/cached/x`, { headers: { connection: 'close' } })
    t.equal(await r.text(), 'cached body')
    t.match(r.headers.get('cache-status'), expected.startsWith('gatehouse; hit') ? /^gatehouse; hit/ : expected)
  }
  const spans = await receiver.waitFor(s => s.filter(x => x.name === 'gateway cache lookup').length >= 2 && s.filter(x => x.kind === SERVER).length >= 2, 'two cache lookup spans')
  const lookups = spans.filter(x => x.name === 'gateway cache lookup').sort((a, b) => Number(a.startNs - b.startNs))
  const servers = spans.filter(x => x.kind === SERVER).sort((a, b) => Number(a.startNs - b.startNs))
  t.match(lookups[0]!.attributes, { 'gatehouse.cache.status': 'miss', 'gatehouse.cache.fwd': 'uri-miss', 'gatehouse.cache.store': 'memory' })
  t.match(lookups[1]!.attributes, { 'gatehouse.cache.status': 'hit', 'gatehouse.cache.store': 'memory' })
  t.equal(lookups[0]!.parentSpanId, servers[0]!.spanId, 'under its request\'s server span')
  t.equal(lookups[1]!.parentSpanId, servers[1]!.spanId)
  t.notOk(spans.some(x => x.kind === CLIENT && x.traceId === servers[1]!.traceId), 'the hit made no backend call')
})

t.test('with Redis (CACHE_TYPE=redis): the access decision and the cache lookup each get a span', async t => {
  const receiver = await startOtlpReceiver(t)
  const redis = createRedis({ REDIS_URL: requireService(TEST_REDIS_URL, 'Redis') }, silentLogger)
  t.teardown(() => redis.disconnect())
  await whenRedisReady(redis)
  const prefix = `gh-test:trace:${process.pid}:${Date.now()}:`
  const backend = await startBackend(t, (_req, res) => { res.setHeader('cache-control', 'max-age=60'); res.end('from the backend') })
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '3000', OTEL_BSP_SCHEDULE_DELAY: '50', GATEWAY_SERVER, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  const tracer = createTracer(config, silentLogger)!
  const c = collection({ base_path: '/limited', upstream_url: backend.url, auth_required: true })
  const gateway = createGateway({
    config, logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }), tracer, env: {},
    access: {
      profiles: () => new Map([['p1', profile({ id: 'p1', auth_type: 'none', collection_ids: [c.id], policy_id: 'limit' })]]),
      policies: () => new Map([['limit', { id: 'limit', status: 'enabled' as const, rate_limit: { requests: 100, per_seconds: 60 }, quota: { requests: 1000, period: 'day' as const } }]]),
      limiter: createRedisLimiter(redis, silentLogger, { keyPrefix: prefix })
    },
    responseCache: new ResponseCache(createRedisStore(redis, prefix, silentLogger), 1024 * 1024)
  })
  const { port } = await gateway.listen()
  t.teardown(async () => { await gateway.close(); await tracer.shutdown() })
  gateway.setRoutes([c], [proxy(c, { path: '/x', cache: { ttl_s: 60, vary: [], shared: true } })])
  for (let i = 0; i < 2; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/limited/x`, { headers: { connection: 'close', 'x-client-id': 'acme', 'x-profile-id': 'p1' } })
    t.equal(r.status, 200)
    t.equal(await r.text(), 'from the backend')
  }
  const spans = await receiver.waitFor(s => s.filter(x => x.name === 'gateway cache lookup').length >= 2 && s.filter(x => x.name === 'gateway access').length >= 2 && s.filter(x => x.kind === SERVER).length >= 2, 'access and cache spans')
  const servers = spans.filter(x => x.kind === SERVER).sort((a, b) => Number(a.startNs - b.startNs))
  for (const [i, server] of servers.entries()) {
    const mine = spans.filter(x => x.parentSpanId === server.spanId)
    t.equal(mine.filter(x => x.name === 'gateway access').length, 1, `request ${i + 1}: the access decision waited on Redis: one span`)
    const lookup = mine.find(x => x.name === 'gateway cache lookup')
    t.match(lookup?.attributes, { 'gatehouse.cache.store': 'redis', 'gatehouse.cache.status': i === 0 ? 'miss' : 'hit' }, `request ${i + 1}: the Redis lookup's span`)
  }
})
