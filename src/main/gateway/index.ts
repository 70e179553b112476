/**
 * The gateway listener on uWebSockets.js: one catch-all route, an immutable
 * route table swapped in one assignment, forwarding over keep-alive pools with
 * backpressure both ways. See docs/gateway.md.
 */
import { randomUUID } from 'node:crypto'
import uWS from 'uWebSockets.js'
import { AppError, badRequest, errorBody, gatewayTimeout, badGateway, methodNotAllowed, notFound, payloadTooLarge, serviceUnavailable, unauthorized } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { compileRouteTable, type CompiledRoute, type RouteTable } from './route-table.js'
import { buildRequestHead, buildTargetPath, DROP_RESPONSE, type ClientRequestInfo } from './request-head.js'
import { UpstreamClient, type Exchange } from './upstream.js'
import type { Principal } from '../access/profile-auth.js'
import { createAccessGate, type AccessDecision, type GatewayAccess } from '../access/gate.js'
import type { RequestRecord } from '../observability/types.js'
import { createHopVerifier, newHopSecret, startTlsListener, TLS_HOP_HEADER, type TlsListener } from './tls-listener.js'

export interface ReadyReport { ok: boolean, checks: Record<string, string> }

export interface GatewayOptions {
  config: Readonly<Config>
  logger: Logger
  readiness: () => Promise<ReadyReport>
  /** Snapshot of the environment for header references (default: process.env at creation). */
  env?: Readonly<Record<string, string | undefined>>
  /** Clients, profiles and policies for collections with auth_required (absent: such calls get 401). */
  access?: GatewayAccess
  /** Called once per finished request (request log, metrics); must not block. */
  observe?: (r: RequestRecord) => void
  /** Runs a proxy's enabled workflow for a request; resolves to the answer or rejects with an AppError. */
  workflows?: (route: CompiledRoute, trigger: WorkflowTrigger) => Promise<{ status: number, headers: Record<string, string>, body: unknown }>
}

/** What an http_trigger exposes to the workflow. */
export interface WorkflowTrigger {
  request: { method: string, path: string, path_params: Record<string, string>, query: Record<string, string | string[]>, headers: Record<string, string>, body: unknown }
}

export type { GatewayAccess }

export interface Gateway {
  setRoutes (collections: Collection[], proxies: Proxy[]): void
  /** Starts the listener, and the TLS listener too when TLS_CERT and TLS_KEY are set. */
  listen (): Promise<{ port: number, tlsPort: number | null }>
  close (): Promise<void>
  readonly inFlight: number
}

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/
// Answers up to this size are gathered and written in one corked call with Content-Length.
const SMALL_BODY = 64 * 1024

export function createGateway (opts: GatewayOptions): Gateway {
  const { config, logger } = opts
  const env = opts.env ?? Object.freeze({ ...process.env })
  const warned = new Set<string>()
  const warn = (msg: string, data: object) => {
    const key = msg + JSON.stringify(data)
    if (!warned.has(key)) { warned.add(key); logger.warn(data, msg) }
  }
  let table: RouteTable = compileRouteTable([], [], env, warn, config.MAX_BODY_BYTES)
  const upstream = new UpstreamClient(config.UPSTREAM_KEEPALIVE)
  const app = uWS.App()
  let listenSocket: unknown = null
  let inFlight = 0
  let draining: (() => void) | null = null
  const done = () => { inFlight--; if (inFlight === 0 && draining !== null) draining() }
  const observe = opts.observe
  // Requests relayed by the TLS listener carry this process's secret; nothing else can claim a certificate.
  const hopSecret = newHopSecret()
  const verifyHop = createHopVerifier(hopSecret)
  let tlsListener: TlsListener | null = null
  let port = 0
  const checkAccess = createAccessGate(opts.access)

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

  app.any('/*', (res, req) => {
    inFlight++
    const started = performance.now()
    let aborted = false
    let ended = false
    let ex: Exchange | null = null
    let status = 0
    res.onAborted(() => { aborted = true; ex?.abort(); if (!ended) { ended = true; done() } })

    // Everything needed from `req` is copied now: it is invalid after this callback returns.
    const method = req.getCaseSensitiveMethod()
    const url = req.getUrl()
    const query = req.getQuery()
    const headers: Array<[string, string]> = []
    let contentLength = -1
    let clCount = 0
    let te: string | null = null
    let teCount = 0
    let host = ''
    let xff: string | null = null
    let requestId: string | null = null
    let connection: string | null = null
    let contentType: string | undefined
    let authorization: string | undefined
    let clientId: string | undefined
    let profileId: string | undefined
    let hopHeader: string | null = null
    req.forEach((k, v) => {
      // The TLS relay header is never forwarded nor shown to a workflow, whoever sent it.
      if (k === TLS_HOP_HEADER) { hopHeader = v; return }
      switch (k) {
        case 'content-type': contentType = v; break
        case 'content-length': clCount++; contentLength = /^\d{1,15}$/.test(v) ? Number(v) : -2; break
        // Compared as sent: the HTTP layer reads only a literal 'chunked' as chunked, so 'CHUNKED' is refused rather than forwarded as a body it never reads.
        case 'transfer-encoding': teCount++; te = v; break
        case 'host': host = v; break
        case 'x-forwarded-for': xff = xff === null ? v : `${xff}, ${v}`; break
        case 'x-request-id': requestId = REQUEST_ID.test(v) ? v : null; break
        case 'connection': connection = v.toLowerCase(); break
        case 'authorization': authorization = v; break
        case 'x-client-id': clientId = v; break
        case 'x-profile-id': profileId = v; break
      }
      headers.push([k, v])
    })
    const rid = requestId ?? randomUUID()
    let limitHeaders: Array<[string, string]> = []
    let remoteIp = Buffer.from(res.getRemoteAddressAsText()).toString()
    let proto: 'http' | 'https' = 'http'
    let certFingerprint: string | undefined
    if (hopHeader !== null) {
      const hop = verifyHop(hopHeader)
      if (hop !== null) { proto = 'https'; remoteIp = hop.remoteIp; certFingerprint = hop.fingerprint ?? undefined }
    }

    const fail = (err: AppError) => {
      if (aborted || ended) return
      status = err.status
      const body = JSON.stringify(errorBody(err, { request_id: rid }))
      // A client sending a refused body is cut off; the TLS relay is not (it must read the answer, and the rest is discarded).
      const close = (err.status === 400 || err.status === 413) && proto === 'http'
      const answer = () => {
        if (aborted) return
        res.cork(() => {
          res.writeStatus(`${err.status}`).writeHeader('content-type', 'application/json').writeHeader('x-request-id', rid)
          if (err.headers !== undefined) for (const [k, v] of Object.entries(err.headers)) res.writeHeader(k, v)
          for (let i = 0; i < limitHeaders.length; i++) res.writeHeader(limitHeaders[i][0], limitHeaders[i][1])
          res.end(body, close)
        })
      }
      // Desync guard: answered inside the handler, uWS would close only after parsing the rest of
      // the read, so bytes pipelined behind a refused request would run as a request of their own.
      // Left pending for one turn, any such bytes make uWS close the connection unanswered instead.
      if (close) setImmediate(answer)
      else answer()
      finish(null)
    }
    let matched: { collection: string, proxy: string } | null = null
    let principal: Principal | null = null
    let bytesIn = 0
    let bytesOut = 0
    const finish = (route: string | null, upstreamMs?: number) => {
      if (ended) return
      ended = true
      done()
      const ms = Math.round((performance.now() - started) * 100) / 100
      logger.info({ request_id: rid, method, path: url, route, status, upstream_ms: upstreamMs, ms }, 'access')
      if (observe !== undefined) {
        observe({
          time: Date.now(), request_id: rid, collection_id: matched?.collection ?? null, proxy_id: matched?.proxy ?? null,
          client_id: principal?.client_id ?? null, profile_id: principal?.profile_id ?? null, method, path: url, status,
          duration_ms: ms, upstream_ms: upstreamMs ?? null, bytes_in: bytesIn, bytes_out: bytesOut
        })
      }
    }

    // Request smuggling: conflicting or repeated framing is refused outright.
    if (clCount > 1 || contentLength === -2 || teCount > 1 || (te !== null && te !== 'chunked')) { fail(badRequest('The request framing is ambiguous or invalid (Content-Length / Transfer-Encoding).')); return }

    const segments = url.length > 1 ? url.slice(1).split('/') : []
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i]
      if (s === '..' || s === '.' || (s.includes('%') && unsafeSegment(s))) { fail(badRequest('The request path contains dot segments or encoded separators.')); return }
    }
    const m = table.match(method, segments)
    if (m === null) { fail(notFound(`No published API matches ${method} ${url}.`)); return }
    if ('allow' in m) { fail(methodNotAllowed(m.allow, `${method} is not allowed here; use ${m.allow.join(', ')}.`)); return }
    const route = m.route
    matched = { collection: route.collection.id, proxy: route.proxy.id }
    bytesIn = contentLength > 0 ? contentLength : 0
    const hasBody = contentLength > 0 || te === 'chunked'
    if (hasBody && !route.streaming && contentLength > route.maxBodyBytes) { fail(payloadTooLarge(`The request body is larger than ${route.maxBodyBytes} bytes.`)); return }
    // Client authentication and the profile's policy, for collections that require them:
    // decided here when the gate can answer at once, else `gate` holds the pending decision.
    let gate: Promise<AppError | null> | null = null
    if (route.collection.auth_required) {
      const taken = (r: AccessDecision): AppError | null => {
        limitHeaders = r.headers
        if (r.principal !== undefined) principal = r.principal
        return r.error
      }
      const broken = (err: unknown): AppError => {
        logger.error({ err, request_id: rid }, 'gateway access check failed')
        return serviceUnavailable('Access could not be checked; retry shortly.', 1)
      }
      let decision: AccessDecision | Promise<AccessDecision>
      try {
        decision = checkAccess({ collectionId: route.collection.id, method, authorization, clientId, profileId, remoteIp, certFingerprint })
      } catch (err) { fail(broken(err)); return }
      if (decision instanceof Promise) gate = decision.then(taken, broken)
      else {
        const refused = taken(decision)
        if (refused !== null) { fail(refused); return }
      }
    }
    const gated = (go: () => void) => {
      if (gate === null) { go(); return }
      gate.then(err => {
        if (aborted || ended) return
        if (err !== null) fail(err)
        else go()
      })
    }

    let target = ''
    const info: ClientRequestInfo = {
      method, headers, host, xff, remoteIp, proto, requestId: rid,
      connectionTokens: connection === null ? null : (connection as string).split(',').map(s => s.trim()).filter(s => s !== 'close' && s !== 'keep-alive')
    }
    const pool = upstream.pool(route.upstream.hostname, route.upstream.port, route.upstream.protocol === 'https:')
    const timeoutMs = route.timeoutMs ?? config.UPSTREAM_TIMEOUT_MS
    const routeName = `${route.collection.base_path} ${route.proxy.path}`
    let upstreamStart = 0

    // Response side: small answers are gathered and written in one go; others stream with backpressure.
    let small: Buffer[] | null = null
    let totalLength = -1
    let pending: Buffer | null = null
    let pendingOffset = 0
    let headWritten = false
    const writeHead = (st: number, text: string, hs: Array<[string, string]>) => {
      res.writeStatus(text === '' ? `${st}` : `${st} ${text}`)
      for (let i = 0; i < hs.length; i++) if (!DROP_RESPONSE.has(hs[i][0])) res.writeHeader(hs[i][0], hs[i][1])
      res.writeHeader('x-request-id', rid)
      for (let i = 0; i < limitHeaders.length; i++) res.writeHeader(limitHeaders[i][0], limitHeaders[i][1])
      headWritten = true
    }
    let head: { status: number, statusText: string, headers: Array<[string, string]> } | null = null
    const streamChunk = (chunk: Buffer) => {
      if (aborted) return
      if (totalLength >= 0) {
        const off = res.getWriteOffset()
        const [ok, fin] = res.tryEnd(chunk, totalLength)
        if (!ok && !fin) {
          pending = chunk
          pendingOffset = off
          ex?.pause()
          res.onWritable(o => {
            if (pending === null) return true
            const [ok2, fin2] = res.tryEnd(pending.subarray(o - pendingOffset), totalLength)
            if (ok2 || fin2) { pending = null; ex?.resume() }
            return ok2
          })
        }
      } else if (!res.write(chunk)) {
        ex?.pause()
        res.onWritable(() => { ex?.resume(); return true })
      }
    }

    const send = (body: Buffer | null) => {
      ex = pool.request({
        head: buildRequestHead(route, info, target, body !== null ? body.length : (hasBody ? (contentLength >= 0 ? contentLength : 'chunked') : 0)),
        body,
        streamingBody: body === null && hasBody,
        noResponseBody: method === 'HEAD',
        retryable: body !== null || !hasBody,
        connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
        responseTimeoutMs: timeoutMs,
        events: {
          onHead (h, framing, length) {
            if (aborted) return
            status = h.status
            head = h
            if (framing === 'length' && length <= SMALL_BODY && !route.streaming) { small = []; totalLength = length; return }
            totalLength = framing === 'length' ? length : -1
            res.cork(() => {
              writeHead(h.status, h.statusText, h.headers)
              if (framing === 'none') {
                if (method === 'HEAD') {
                  const cl = h.headers.find(x => x[0] === 'content-length')
                  res.endWithoutBody(cl !== undefined ? Number(cl[1]) : undefined)
                } else res.end()
              }
            })
          },
          onBody (chunk) {
            if (aborted) return
            bytesOut += chunk.length
            if (small !== null) { small.push(Buffer.from(chunk)); return }
            res.cork(() => streamChunk(chunk))
          },
          onEnd () {
            if (aborted) { finish(routeName); return }
            if (small !== null) {
              const body = small.length === 1 ? small[0] : Buffer.concat(small)
              const h = head!
              res.cork(() => { writeHead(h.status, h.statusText, h.headers); res.end(body) })
            } else if (totalLength < 0 && headWritten) res.cork(() => { res.end() })
            finish(routeName, Math.round(performance.now() - upstreamStart))
          },
          onError (kind, err) {
            if (aborted) { finish(routeName); return }
            if (headWritten || (head !== null && small === null)) {
              // The answer already started: all we can do is cut the connection.
              status = status || 502
              res.cork(() => res.close())
              finish(routeName)
              return
            }
            logger.debug({ request_id: rid, err: err.message, kind }, 'upstream failure')
            fail(kind === 'timeout' ? gatewayTimeout(`The backend did not answer within ${timeoutMs} ms.`) : badGateway(kind === 'connect' ? 'The backend could not be reached.' : 'The backend gave an invalid answer.'))
          }
        }
      })
    }

    // A proxy with an enabled workflow answers from the workflow (run in the worker pool).
    const runFlow = (q: string, body: Buffer | null) => {
      if (opts.workflows === undefined) { fail(serviceUnavailable('Workflows are not available on this instance.')); return }
      const reqHeaders: Record<string, string> = {}
      for (const [k, v] of headers) if (k !== 'authorization' && k !== 'x-client-id' && k !== 'x-profile-id') reqHeaders[k] = v
      const sp = new URLSearchParams(q)
      const queryObj: Record<string, string | string[]> = {}
      for (const k of new Set(sp.keys())) { const all = sp.getAll(k); queryObj[k] = all.length === 1 ? all[0] : all }
      let parsed: unknown = null
      if (body !== null && body.length > 0) {
        const text = body.toString('utf8')
        parsed = /json/i.test(contentType ?? '') ? safeJson(text) : text
      }
      const trigger: WorkflowTrigger = {
        request: {
          method, path: url, query: queryObj, headers: reqHeaders, body: parsed,
          path_params: Object.fromEntries(route.paramNames.map((n, i) => [n, safeDecode(m.params[i] ?? '')]))
        }
      }
      upstreamStart = performance.now()
      opts.workflows(route, trigger).then(answer => {
        if (aborted || ended) return
        status = answer.status
        const isText = typeof answer.body === 'string'
        const payload = answer.body === null || answer.body === undefined ? '' : isText ? answer.body as string : JSON.stringify(answer.body)
        res.cork(() => {
          res.writeStatus(String(answer.status))
          let typed = false
          for (const [k, v] of Object.entries(answer.headers)) {
            if (DROP_RESPONSE.has(k)) continue
            if (k === 'content-type') typed = true
            res.writeHeader(k, v)
          }
          if (!typed && payload !== '') res.writeHeader('content-type', isText ? 'text/plain; charset=utf-8' : 'application/json')
          res.writeHeader('x-request-id', rid)
          for (let i = 0; i < limitHeaders.length; i++) res.writeHeader(limitHeaders[i][0], limitHeaders[i][1])
          res.end(payload)
        })
        finish(routeName, Math.round(performance.now() - upstreamStart))
      }, (err: unknown) => {
        if (!(err instanceof AppError)) logger.error({ err, request_id: rid }, 'workflow run failed')
        fail(err instanceof AppError ? err : new AppError(500, 'workflow_failed', 'The workflow failed; see its execution record.'))
      })
    }
    // Validation (when the proxy declares parameters or a schema) runs before anything is forwarded.
    const validator = route.validator
    const proceed = (body: Buffer | null): boolean => {
      let q = query ?? ''
      if (validator !== null) {
        const r = validator.validate({ params: m.params, paramNames: route.paramNames, query: q, contentType, body })
        if (r instanceof AppError) { fail(r); return false }
        q = r.query
      }
      if (route.workflow !== null) { runFlow(q, body); return true }
      target = buildTargetPath(route, m.params, m.tail) + (q !== '' ? `?${q}` : '')
      upstreamStart = performance.now()
      send(body)
      return true
    }

    if (!hasBody) { gated(() => proceed(null)); return }
    if ((!route.streaming && (contentLength >= 0 || validator?.needsBody === true)) || route.workflow !== null) {
      // A buffered body (known size, or needed for validation) leaves with the head in one write.
      const chunks: Buffer[] = []
      let at = 0
      res.onData((ab, last) => {
        if (ended) return
        at += ab.byteLength
        if ((contentLength >= 0 && at > contentLength) || at > route.maxBodyBytes) {
          fail(at > route.maxBodyBytes ? payloadTooLarge(`The request body is larger than ${route.maxBodyBytes} bytes.`) : badRequest('The request body is longer than its Content-Length.'))
          return
        }
        // The chunk's memory is reused after this callback: copy it.
        chunks.push(Buffer.from(Buffer.from(ab)))
        if (last) { const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, at); gated(() => proceed(body)) }
      })
      return
    }
    // Streamed request body (streaming proxies, or chunked uploads): pause the client while the backend is slow.
    let received = 0
    let bodyOpen = false
    // uWS misbehaves when resume() meets a socket that is not paused: track it.
    let clientPaused = false
    const pauseClient = () => { if (!clientPaused) { clientPaused = true; res.pause() } }
    const resumeClient = () => { if (clientPaused && !aborted) { clientPaused = false; res.resume() } }
    const early: Array<{ chunk: Buffer, last: boolean }> = []
    const forward = (chunk: Buffer, last: boolean): boolean => {
      const ok = (ex as Exchange | null)?.writeBody(chunk, last) ?? true
      if (!ok && !last) pauseClient()
      return ok
    }
    res.onData((ab, last) => {
      if (ended) return
      received += ab.byteLength
      bytesIn = received
      if (!route.streaming && received > route.maxBodyBytes) { ex?.abort(); fail(payloadTooLarge(`The request body is larger than ${route.maxBodyBytes} bytes.`)); return }
      // The chunk's memory is reused after this callback: copy it.
      const chunk = Buffer.from(ab.slice(0))
      if (!bodyOpen) { early.push({ chunk, last }); if (!last) pauseClient(); return }
      forward(chunk, last)
    })
    gated(() => {
      bodyOpen = true
      if (!proceed(null)) return
      const exchange = ex as Exchange | null
      if (exchange !== null) exchange.onDrain = resumeClient
      let ok = true
      for (const e of early.splice(0)) ok = forward(e.chunk, e.last)
      if (ok) resumeClient()
    })
  })

  return {
    get inFlight () { return inFlight },
    setRoutes (collections, proxies) {
      // Built aside and swapped in one assignment: a request sees the old table or the new, never a mix.
      table = compileRouteTable(collections, proxies, env, warn, config.MAX_BODY_BYTES)
    },
    async listen () {
      port = await new Promise<number>((resolve, reject) => {
        app.listen(config.HOST, config.PORT, ls => {
          if (ls === false) { reject(new Error(`The gateway could not listen on ${config.HOST}:${config.PORT}.`)); return }
          listenSocket = ls
          resolve(uWS.us_socket_local_port(ls))
        })
      })
      if (config.TLS_CERT !== '' && config.TLS_KEY !== '') {
        tlsListener = await startTlsListener({
          cert: config.TLS_CERT, key: config.TLS_KEY, ca: config.TLS_CA, host: config.HOST, port: config.TLS_PORT,
          inner: () => ({ host: loopbackFor(config.HOST), port }), secret: hopSecret, logger
        })
      }
      return { port, tlsPort: tlsListener?.port ?? null }
    },
    async close () {
      tlsListener?.stop()
      if (listenSocket !== null) { uWS.us_listen_socket_close(listenSocket as any); listenSocket = null }
      if (inFlight > 0) {
        await new Promise<void>(resolve => {
          const timer = setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS)
          draining = () => { clearTimeout(timer); resolve() }
        })
      }
      await tlsListener?.close()
      tlsListener = null
      app.close()
      upstream.close()
    }
  }
}

/** The address this process reaches its own uWS listener at (wildcards become loopback). */
function loopbackFor (host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '::1'
  return host
}

function safeJson (text: string): unknown {
  try { return JSON.parse(text) } catch { return text }
}

function safeDecode (s: string): string {
  try { return decodeURIComponent(s) } catch { return s }
}

function unsafeSegment (s: string): boolean {
  let d: string
  try { d = decodeURIComponent(s) } catch { return true }
  return d === '.' || d === '..' || d.includes('/') || d.includes('\\') || d.includes('\0')
}
