/**
 * The gateway listener: `/livez`, `/readyz`, and one
 * catch-all route that runs each request through named stages over one
 * per-request object (GatewayExchange), the way fastify chains its hooks:
 *
 *   exchange (copy the head) ─> framing ─> path ─> [CORS preflight: 204] ─> match ─> access ─> body ─> validate
 *                                                                              ├─> workflow target
 *                                                                              └─> forward
 *
 * Any stage may answer with an error (x.fail) and stop the chain. The HTTP layer under it
 * (http/: uWebSockets.js, or node:http with GATEWAY_SERVER=node) only delivers (res, req).
 */
import { AppError, badRequest, methodNotAllowed, notFound, payloadTooLarge, serviceUnavailable } from '../../common/errors.js'
import { createAccessGate } from '../access/gate.js'
import { checkAccess } from './access.js'
import { readBody } from './body.js'
import { GatewayExchange, type GatewayContext } from './exchange.js'
import { createHttpLayer, type GatewayLayer } from './http/index.js'
import { probeFreePort } from './http/uws.js'
import { createRouteList } from './http/routes.js'
import { registerWebRoute } from './mcp-route.js'
import { createTrustedProxies } from './trusted-proxies.js'
import { parseTrustedProxies } from '../../common/cidr.js'
import { createLoadShedder } from './load-shedding.js'
import { forward } from './forward.js'
import { relayWebSocket } from './websocket/relay.js'
import type { Gateway, GatewayOptions } from './index.js'
import { RouteTable } from './route-table.js'
import { createHopVerifier, newHopSecret, startTlsListener, type TlsListener } from './tls-listener.js'
import { UpstreamClient } from './upstream.js'
import { UpstreamRegistry } from './upstreams/registry.js'
import { accessLogger } from '../logger.js'
import { runWorkflowTarget } from './workflow-target.js'
import { answerPreflight, applyCors } from './responses/cors.js'
import { chooseEncoding } from './responses/compression.js'
import { BYPASS, ResponseCache, serveCached } from './responses/response-cache.js'
import { createMemoryStore } from './responses/cache-store.js'

export function createGateway (opts: GatewayOptions): Gateway {
  const { config, logger } = opts
  const env = opts.env ?? Object.freeze({ ...process.env })
  const warned = new Set<string>()
  const warn = (msg: string, data: object) => {
    const key = msg + JSON.stringify(data)
    if (!warned.has(key)) { warned.add(key); logger.warn(data, msg) }
  }
  // Requests relayed by the TLS listener carry this process's secret; nothing else can claim a certificate.
  const hopSecret = opts.hopSecret ?? newHopSecret()
  const verifyHop = createHopVerifier(hopSecret)
  const upstreams = new UpstreamRegistry({ maxIdle: config.UPSTREAM_KEEPALIVE, dnsRefreshMs: config.UPSTREAM_DNS_REFRESH_MS, logger, lookup: opts.lookup, share: opts.upstreamShare })
  const ctx: GatewayContext = {
    config,
    logger,
    access: accessLogger(logger),
    observe: opts.observe,
    workflows: opts.workflows,
    checkAccess: createAccessGate(opts.access),
    upstream: new UpstreamClient(config.UPSTREAM_KEEPALIVE),
    tracer: opts.tracer ?? null,
    verifyHop,
    trusted: createTrustedProxies(parseTrustedProxies(config.TRUSTED_PROXIES)),
    shedder: createLoadShedder({ maxInFlight: config.SHED_MAX_IN_FLIGHT, maxDelayMs: config.SHED_EVENT_LOOP_DELAY_MS }),
    table: new RouteTable(env, warn, config.MAX_BODY_BYTES, upstreams, { compression: config.COMPRESSION === 'on', compressionMinBytes: config.COMPRESSION_MIN_BYTES }),
    responseCache: opts.responseCache ?? new ResponseCache(createMemoryStore(config.RESPONSE_CACHE_MAX_BYTES), config.RESPONSE_CACHE_MAX_ENTRY_BYTES),
    inFlight: 0,
    draining: null
  }
  const app = createRouteList()
  let layer: GatewayLayer | null = null
  let tlsPort: number | null = null
  let tlsListener: TlsListener | null = null
  let port = 0

  app.get('/livez', res => { res.writeHeader('content-type', 'application/json').end('{"status":"ok"}') })
  app.get('/readyz', res => {
    let aborted = false
    res.onAborted(() => { aborted = true })
    opts.readiness().catch((err: Error) => ({ ok: false, checks: { service: err.message } })).then(r => {
      if (aborted) return
      res.cork(() => {
        res.writeStatus(r.ok ? '200 OK' : '503 Service Unavailable').writeHeader('content-type', 'application/json')
          .end(JSON.stringify({ status: r.ok ? 'ready' : 'not_ready', checks: r.checks }))
      })
    })
  })
  opts.mount?.(app)
  for (const { path, handler } of opts.webRoutes ?? []) {
    registerWebRoute(app, path, handler, {
      logger,
      trusted: ctx.trusted,
      maxBodyBytes: config.MAX_BODY_BYTES,
      verifyHop,
      hopSecret,
      selfOrigin: () => `http://${urlHost(loopbackFor(config.HOST))}:${port}`,
      begin: () => { ctx.inFlight++ },
      end: () => {
        ctx.inFlight--
        if (ctx.inFlight === 0 && ctx.draining !== null) ctx.draining()
      }
    })
  }
  app.any('/*', (res, req) => { handleRequest(new GatewayExchange(ctx, res, req)) })
  // Upgrade requests run the same stages; proceed() relays them when the proxy has websocket: true.
  app.upgrade('/*', (res, req, accept, take) => {
    const x = new GatewayExchange(ctx, res, req)
    x.accept = accept
    x.take = take
    handleRequest(x)
  })

  return {
    hopSecret,
    abort () {
      layer?.stopListening()
      layer?.close()
      layer = null
    },
    get inFlight () { return ctx.inFlight },
    get shed () { return { ...ctx.shedder.shed } },
    // Applied synchronously on this thread: a request sees the table before or after a change, never a mix.
    setRoutes (collections, proxies) {
      ctx.table.set(collections, proxies)
      // Entries of the previous configuration are never served (the route's cache tag moved): free them.
      for (const p of proxies) ctx.responseCache.dropLocal(p.id)
    },
    updateRoutes (delta) {
      ctx.table.apply(delta)
      for (const p of delta.proxies ?? []) ctx.responseCache.dropLocal(p.id)
      for (const id of delta.removedProxies ?? []) ctx.responseCache.dropLocal(id)
    },
    responseCache: ctx.responseCache,
    upstreamHealth (collectionId) { return upstreams.health(collectionId) },
    upstreamMetrics () { return upstreams.prometheus() },
    upstreams,
    async listen () {
      layer = createHttpLayer(config.GATEWAY_SERVER, app.routes, { logger, hopSecret })
      const sharing = config.GATEWAY_SERVER === 'uws' ? opts.portSharing : undefined
      port = await layer.listen(config.HOST, sharing === 'first' ? await probeFreePort(config.HOST, config.PORT) : config.PORT, sharing !== undefined)
      if (sharing === 'join') return { port, tlsPort: null }
      if (config.TLS_CERT !== '' && config.TLS_KEY !== '' && layer.listenTls !== undefined) {
        // node: HTTP/2 and HTTP/1.1 by ALPN on the same layer, certificates checked in-process.
        tlsPort = await layer.listenTls({ cert: config.TLS_CERT, key: config.TLS_KEY, ca: config.TLS_CA, host: config.HOST, port: config.TLS_PORT })
      } else if (config.TLS_CERT !== '' && config.TLS_KEY !== '') {
        // uws: a node:https relay in front (tls-listener.ts).
        tlsListener = await startTlsListener({
          cert: config.TLS_CERT, key: config.TLS_KEY, ca: config.TLS_CA, host: config.HOST, port: config.TLS_PORT,
          inner: () => ({ host: loopbackFor(config.HOST), port }), secret: hopSecret, logger
        })
      }
      return { port, tlsPort: tlsListener?.port ?? tlsPort }
    },
    async close () {
      tlsListener?.stop()
      layer?.stopListening()
      if (ctx.inFlight > 0) {
        await new Promise<void>(resolve => {
          const timer = setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS)
          ctx.draining = () => { clearTimeout(timer); resolve() }
        })
      }
      await tlsListener?.close()
      tlsListener = null
      layer?.close()
      layer = null
      ctx.upstream.close()
      upstreams.close()
      ctx.shedder.close()
    }
  }
}

/** The stages up to the body; each returns having answered, or hands on. */
function handleRequest (x: GatewayExchange): void {
  // Overloaded: a cheap 503 now rather than a slow answer for everyone.
  const shed = x.ctx.shedder.reason(x.ctx.inFlight)
  if (shed !== null) { x.fail(serviceUnavailable(`The gateway is overloaded (${shed}); retry shortly.`, 1)); return }
  // Request smuggling: conflicting or repeated framing is refused outright.
  if (x.clCount > 1 || x.contentLength === -2 || x.teCount > 1 || (x.te !== null && x.te !== 'chunked')) { x.fail(badRequest('The request framing is ambiguous or invalid (Content-Length / Transfer-Encoding).')); return }
  // Two Host headers: caches, routers and backends may each believe a different one (RFC 9112 §3.2).
  if (x.hostCount > 1) { x.fail(badRequest('The request has more than one Host header.')); return }
  const url = x.url
  const segments = url.length > 1 ? url.slice(1).split('/') : []
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]! // i < segments.length
    if (s === '..' || s === '.' || (s.includes('%') && unsafeSegment(s))) { x.fail(badRequest('The request path contains dot segments or encoded separators.')); return }
  }
  // A CORS preflight carries no credentials: answered before the access stage, by the gateway itself.
  if (x.method === 'OPTIONS' && x.acrMethod !== null && x.origin !== null && answerPreflight(x, segments)) return
  const m = x.ctx.table.match(x.method, segments)
  if (m === null) { x.fail(notFound(`No published API matches ${x.method} ${url}.`)); return }
  if ('allow' in m) { x.fail(methodNotAllowed(m.allow, `${x.method} is not allowed here; use ${m.allow.join(', ')}.`)); return }
  x.match = m
  const route = m.route
  if (route.cors !== null) applyCors(x, route.cors)
  if (route.compression !== null) { x.varyEncoding = true; x.encoding = chooseEncoding(x.acceptEncoding) }
  // Every answer of a cached proxy says what the cache did; the cache stage refines this one.
  if (route.cache !== null) x.cacheStatus = BYPASS
  x.bytesIn = x.contentLength > 0 ? x.contentLength : 0
  if (x.hasBody && !route.streaming && x.contentLength > route.maxBodyBytes) { x.fail(payloadTooLarge(`The request body is larger than ${route.maxBodyBytes} bytes.`)); return }
  if (!checkAccess(x)) return
  readBody(x, proceed)
}

/** Validation (when the proxy declares parameters or a schema), then the route's target. False when refused. */
function proceed (x: GatewayExchange, body: Buffer | null): boolean {
  const { route, params } = x.match!
  let q = x.query
  const validator = route.validator
  if (validator !== null) {
    const r = validator.validate({ method: x.method, params, paramNames: route.paramNames, query: q, contentType: x.contentType, body })
    if (r instanceof AppError) { x.fail(r); return false }
    q = r.query
  }
  // A WebSocket handshake on a proxy that relays them; on any other proxy it is a plain request.
  if ((x.accept !== null || x.take !== null) && route.websocket) relayWebSocket(x, q)
  else if (route.cache !== null) serveCached(x, route.cache, q, () => { origin(x, q, body) })
  else origin(x, q, body)
  return true
}

/** The route's answer: its workflow's, or its backend's. */
function origin (x: GatewayExchange, q: string, body: Buffer | null): void {
  if (x.match!.route.workflow !== null) runWorkflowTarget(x, q, body)
  else forward(x, q, body)
}

/** The address this process reaches its own uWS listener at (wildcards become loopback). */
export function loopbackFor (host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '::1'
  return host
}

/** An address as the host part of a URL (IPv6 in brackets). */
export function urlHost (address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address
}

function unsafeSegment (s: string): boolean {
  let d: string
  try { d = decodeURIComponent(s) } catch { return true }
  return d === '.' || d === '..' || d.includes('/') || d.includes('\\') || d.includes('\0')
}
