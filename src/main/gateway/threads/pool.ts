/**
 * GATEWAY_THREADS > 1 (uws): the main thread's gateway is thread 0; threads 1…N-1 are worker
 * threads (startup/gateway-thread.ts), each a uWS app listening on the same port with SO_REUSEPORT, so the kernel
 * spreads connections over them. The main thread stays the one owner of everything else:
 *
 *   main thread: management, SSE, triggers, workflow pool, store, request log writer, /metrics
 *     ├─ gateway thread 0 (its own uWS app)
 *     └─ gateway threads 1…N-1 ── routes/access (versioned, acknowledged) ◀── main
 *                                 records, quota hits, log lines (batched) ──▶ main
 *                                 workflow runs, /mcp, portal assistant ──▶ main (relayed)
 *                                 response-cache lookups and stores ──▶ main's memory store
 *                                 passive upstream failures ──▶ main; health changes ◀── main
 *
 * A configuration change is applied on thread 0 and posted to every thread; settled() resolves
 * once each thread has acknowledged that version, so a management write answers after every
 * thread serves it. A thread that crashes closes its connections, exits and is started again
 * with the current configuration (logged, counted at /metrics); the others keep serving.
 */
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { AppError, toAppError } from '../../../common/errors.js'
import type { Collection, Proxy } from '../../../common/types.js'
import type { SharedMemoryLimiter } from '../../cache/shared-memory-limiter.js'
import { lineWriter } from '../../logger.js'
import { createGateway, type Gateway, type GatewayOptions } from '../index.js'
import type { CompiledRoute } from '../route-table.js'
import type { AccessMessage, CacheAnswer, CacheRequest, FromThread, ThreadData, ToThread } from './messages.js'
import { batchSize, decodeRecords } from './records.js'
import { fromWire, toWire, type CacheEntry, type WireCacheEntry } from '../responses/cache-store.js'
import type { HealthChange } from '../upstreams/health.js'

export interface ThreadedGatewayOptions extends GatewayOptions {
  /** GATEWAY_THREADS: thread 0 (this one) plus threads - 1 worker threads. */
  threads: number
  /** The shared counters (CACHE_TYPE=memory) and the limiter over them, told of other threads' quota hits. */
  limiterMemory: SharedArrayBuffer | null
  limiter: SharedMemoryLimiter | null
  keyPrefix?: string
  /** The access snapshot at start (later ones come through setAccess). */
  initialAccess: AccessMessage
}

export interface GatewayThreads {
  /** Threads serving now, this one included. */
  readonly running: number
  /** Hands every thread the new access snapshot (profiles, policies). */
  setAccess (access: AccessMessage): void
  /** Resolves once every thread has acknowledged the latest configuration version. */
  settled (): Promise<void>
  /**
   * Drops a proxy's cached answers in every thread's memory; with the main thread's one memory
   * store, takes the stores threads have sent (call it before purging that store).
   */
  purge (proxyId: string): void
  /** Gateway threads' lines for /metrics. */
  prometheus (): string
  /** Test hook: makes worker thread `index` (1…N-1) crash with an uncaught error. */
  crash (index: number): void
  /** Resolves when worker thread `index` serves again after a restart (tests). */
  restarted (index: number): Promise<void>
}

interface Slot {
  index: number
  worker: Worker | null
  ready: boolean
  acked: number
  shed: { in_flight: number, event_loop_delay: number }
  crashes: number
  onReady: Array<() => void>
  /** The main thread's end of the thread's response-cache port (CACHE_TYPE=memory). */
  cachePort: MessagePort | null
}

const THREAD_METRICS = '# HELP gatehouse_gateway_threads Gateway event loops serving the gateway port (GATEWAY_THREADS).\n# TYPE gatehouse_gateway_threads gauge\n'

export function createThreadedGateway (opts: ThreadedGatewayOptions): Gateway & { threads: GatewayThreads } {
  const { config, logger } = opts
  const requests = new Array<number>(opts.threads).fill(0)
  const observe = opts.observe
  // Upstream health is judged here, for the process: the other threads report to it and apply its changes.
  const upstreamShare = { changed: (c: HealthChange) => { post({ t: 'health', changes: [c] }) } }
  const main = createGateway({ ...opts, portSharing: 'first', upstreamShare, observe: r => { requests[0] = (requests[0] ?? 0) + 1; observe?.(r) } })
  const env = opts.env ?? Object.freeze({ ...process.env })
  const writeLines = lineWriter(logger)
  const webHandlers = new Map((opts.webRoutes ?? []).map(w => [w.path, w.handler]))
  const slots: Slot[] = []
  for (let i = 1; i < opts.threads; i++) slots.push({ index: i, worker: null, ready: false, acked: 0, shed: { in_flight: 0, event_loop_delay: 0 }, crashes: 0, onReady: [], cachePort: null })
  let version = 0
  let collections = new Map<string, Collection>()
  let proxies = new Map<string, Proxy>()
  let access = opts.initialAccess
  let port = 0
  let closing = false
  let restarts = 0
  const waiters: Array<{ v: number, resolve: () => void }> = []
  const webStreams = new Map<string, ReadableStreamDefaultReader<Uint8Array>>()
  // CACHE_TYPE=memory: thread 0's store is the process's one response cache; the threads ask it.
  const cacheStore = main.responseCache.store.kind === 'memory' ? main.responseCache.store : null

  // The memory store is synchronous: a lookup is answered at once, on the port it came by. Before
  // it, every thread's stores already sent are taken (so a lookup finds what was stored before it
  // was asked, whichever thread stored it), as before a purge.
  const takePendingStores = () => {
    for (const s of slots) {
      const p = s.cachePort
      if (p === null) continue
      for (let r = receiveMessageOnPort(p); r !== undefined; r = receiveMessageOnPort(p)) onCache(p, r.message as CacheRequest, false)
    }
  }
  const onCache = (p: MessagePort, m: CacheRequest, first = true) => {
    if (cacheStore === null) return
    if (m.t === 'set') { cacheStore.set(m.proxyId, m.key, fromWire(m.entry)); return }
    if (first) takePendingStores()
    const entries: Array<WireCacheEntry | null> = []
    const transfer: ArrayBuffer[] = []
    // A key asked for twice in the batch is copied once (the clone keeps one object for both).
    const seen = new Map<string, WireCacheEntry | null>()
    for (const key of m.keys) {
      let entry = seen.get(key)
      if (entry === undefined) {
        const e = cacheStore.get('', key) as CacheEntry | null
        if (e === null) entry = null
        else {
          const [wire, buffers] = toWire(e)
          entry = wire
          transfer.push(...buffers)
        }
        seen.set(key, entry)
      }
      entries.push(entry)
    }
    p.postMessage({ id: m.id, entries } satisfies CacheAnswer, transfer)
  }

  const checkWaiters = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!
      if (slots.every(s => s.worker === null || s.acked >= w.v)) { waiters.splice(i, 1); w.resolve() }
    }
  }
  const post = (m: ToThread) => { for (const s of slots) s.worker?.postMessage(m) }

  const answer = (slot: Slot, m: Extract<FromThread, { t: 'call' }>) => {
    const w = slot.worker
    const done = (value: unknown) => { w?.postMessage({ t: 'reply', id: m.id, ok: true, value } satisfies ToThread) }
    const failed = (err: unknown) => {
      if (!(err instanceof AppError)) logger.error({ err }, 'a gateway thread\'s call failed on the main thread')
      const e = toAppError(err)
      w?.postMessage({ t: 'reply', id: m.id, ok: false, error: { status: e.status, code: e.code, message: e.message, details: e.details, headers: e.headers } } satisfies ToThread)
    }
    if (m.op === 'readiness') { opts.readiness().then(done, failed); return }
    const run = opts.workflows
    if (run === undefined) { failed(new AppError(503, 'service_unavailable', 'Workflows are not available on this instance.')); return }
    const [route, trigger, trace] = m.args as [CompiledRoute, unknown, Parameters<typeof run>[2]]
    run(route, trigger as Parameters<typeof run>[1], trace).then(done, failed)
  }

  const relayWeb = (slot: Slot, m: Extract<FromThread, { t: 'web' }>) => {
    const w = slot.worker!
    const key = `${slot.index}:${m.id}`
    const handler = webHandlers.get(m.path)
    const fail = (err: unknown) => { w.postMessage({ t: 'web-error', id: m.id, message: (err as Error).message } satisfies ToThread) }
    if (handler === undefined) { fail(new Error(`no web route at ${m.path}`)); return }
    const req = new Request(m.url, { method: m.method, headers: m.headers, body: m.body, duplex: 'half' } as RequestInit)
    handler(req, m.peer as Parameters<typeof handler>[1]).then(async res => {
      w.postMessage({ t: 'web-head', id: m.id, status: res.status, headers: [...res.headers] } satisfies ToThread)
      if (res.body === null) { w.postMessage({ t: 'web-end', id: m.id } satisfies ToThread); return }
      // Streamed as it comes (an MCP answer may be an event stream).
      const reader = res.body.getReader()
      webStreams.set(key, reader)
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          w.postMessage({ t: 'web-chunk', id: m.id, chunk: value } satisfies ToThread)
        }
        w.postMessage({ t: 'web-end', id: m.id } satisfies ToThread)
      } finally { webStreams.delete(key) }
    }).catch(fail)
  }

  const onMessage = (slot: Slot, m: FromThread) => {
    switch (m.t) {
      case 'ready':
        slot.ready = true
        for (const f of slot.onReady.splice(0)) f()
        break
      case 'ack': slot.acked = Math.max(slot.acked, m.v); checkWaiters(); break
      case 'obs':
        requests[slot.index] = (requests[slot.index] ?? 0) + batchSize(m.records)
        slot.shed = m.shed
        if (observe !== undefined) decodeRecords(m.records, observe)
        for (const q of m.quotas) opts.limiter?.notify(q[0], q[1], q[2], q[3])
        for (const c of m.cache) main.responseCache.add(c[0], c[1], c[2], c[3])
        break
      case 'health': main.upstreams.report(m.reports); break
      case 'log': if (writeLines !== null) writeLines(m.text); else process.stdout.write(m.text); break
      case 'call': answer(slot, m); break
      case 'web': relayWeb(slot, m); break
      case 'web-cancel': void webStreams.get(`${slot.index}:${m.id}`)?.cancel().catch(() => {}); break
      case 'closed': break
    }
  }

  const spawn = (slot: Slot): void => {
    const data: ThreadData = {
      index: slot.index,
      config: { ...config, PORT: port },
      env,
      hopSecret: main.hopSecret,
      limiterMemory: opts.limiterMemory,
      keyPrefix: opts.keyPrefix,
      webPaths: [...webHandlers.keys()],
      version,
      collections: [...collections.values()],
      proxies: [...proxies.values()],
      access,
      cachePort: null,
      health: main.upstreams.states()
    }
    // A port per thread (and per start: a restarted thread's lookup ids start again).
    slot.cachePort?.close()
    slot.cachePort = null
    let transferList: MessagePort[] = []
    if (cacheStore !== null) {
      const { port1, port2 } = new MessageChannel()
      data.cachePort = port2
      transferList = [port2]
      slot.cachePort = port1
      port1.on('message', (m: CacheRequest) => { onCache(port1, m) })
    }
    const worker = new Worker(threadFile(), { workerData: data, name: `gateway-${slot.index}`, transferList })
    slot.worker = worker
    slot.ready = false
    slot.acked = 0
    const started = Date.now()
    worker.on('message', (m: FromThread) => { onMessage(slot, m) })
    worker.on('error', err => { logger.error({ err, thread: slot.index }, `gateway thread ${slot.index} failed`) })
    worker.on('exit', code => {
      slot.worker = null
      slot.cachePort?.close()
      slot.cachePort = null
      slot.ready = false
      checkWaiters()
      for (const key of webStreams.keys()) if (key.startsWith(`${slot.index}:`)) void webStreams.get(key)?.cancel().catch(() => {})
      if (closing) return
      restarts++
      // A thread that dies at once again and again is restarted at a slowing pace (up to 10 s).
      slot.crashes = Date.now() - started < 5_000 ? slot.crashes + 1 : 1
      const delay = Math.min(10_000, 100 * 2 ** (slot.crashes - 1))
      logger.error({ thread: slot.index, code, restarts }, `gateway thread ${slot.index} stopped unexpectedly (exit ${code}); restarting it in ${delay} ms, the other threads serve meanwhile`)
      setTimeout(() => { if (!closing) spawn(slot) }, delay).unref()
    })
  }

  const threads: GatewayThreads = {
    get running () { return 1 + slots.filter(s => s.ready).length },
    setAccess (a) {
      access = a
      post({ t: 'access', v: ++version, access: a })
    },
    async settled () {
      const v = version
      if (slots.every(s => s.worker === null || s.acked >= v)) return
      await new Promise<void>(resolve => { waiters.push({ v, resolve }) })
    },
    purge (proxyId) { if (cacheStore === null) post({ t: 'purge', proxyId }); else takePendingStores() },
    prometheus () {
      const lines = [THREAD_METRICS + `gatehouse_gateway_threads ${threads.running}`,
        '# HELP gatehouse_gateway_thread_restarts_total Gateway threads started again after a crash.',
        '# TYPE gatehouse_gateway_thread_restarts_total counter',
        `gatehouse_gateway_thread_restarts_total ${restarts}`,
        '# HELP gatehouse_gateway_thread_requests_total Gateway requests finished, by the thread that served them.',
        '# TYPE gatehouse_gateway_thread_requests_total counter']
      for (let i = 0; i < requests.length; i++) lines.push(`gatehouse_gateway_thread_requests_total{thread="${i}"} ${requests[i]}`)
      return lines.join('\n') + '\n'
    },
    crash (index) { slots[index - 1]?.worker?.postMessage({ t: 'crash' } satisfies ToThread) },
    async restarted (index) {
      const slot = slots[index - 1]
      if (slot === undefined) return
      await new Promise<void>(resolve => { slot.onReady.push(resolve) })
    }
  }

  return {
    threads,
    hopSecret: main.hopSecret,
    abort () { main.abort() },
    get inFlight () { return main.inFlight },
    get shed () {
      const s = { ...main.shed }
      for (const slot of slots) { s.in_flight += slot.shed.in_flight; s.event_loop_delay += slot.shed.event_loop_delay }
      return s
    },
    responseCache: main.responseCache,
    setRoutes (cs, ps) {
      main.setRoutes(cs, ps)
      collections = new Map(cs.map(c => [c.id, c]))
      proxies = new Map(ps.map(p => [p.id, p]))
      post({ t: 'routes', v: ++version, full: true, collections: cs, proxies: ps })
    },
    updateRoutes (delta) {
      main.updateRoutes(delta)
      for (const id of delta.removedCollections ?? []) collections.delete(id)
      for (const id of delta.removedProxies ?? []) proxies.delete(id)
      for (const c of delta.collections ?? []) collections.set(c.id, c)
      for (const p of delta.proxies ?? []) proxies.set(p.id, p)
      post({ t: 'routes', v: ++version, full: false, delta })
    },
    upstreamHealth (id) { return main.upstreamHealth(id) },
    upstreamMetrics () { return main.upstreamMetrics() },
    upstreams: main.upstreams,
    async listen () {
      const r = await main.listen()
      port = r.port
      await Promise.all(slots.map(async slot => {
        const ready = new Promise<void>(resolve => { slot.onReady.push(resolve) })
        spawn(slot)
        const exited = new Promise<never>((_resolve, reject) => {
          slot.worker!.once('exit', code => { reject(new Error(`gateway thread ${slot.index} could not start (exit ${code})`)) })
        })
        await Promise.race([ready, exited])
      })).catch(async err => {
        closing = true
        await Promise.allSettled([main.close(), ...slots.map(stop)])
        throw err
      })
      return r
    },
    async close () {
      closing = true
      await Promise.all([main.close(), ...slots.map(stop)])
      for (const s of slots) { s.cachePort?.close(); s.cachePort = null }
      for (const w of waiters.splice(0)) w.resolve()
    }
  }
}

/** Asks a worker thread to drain and stop; resolves when it has exited. */
async function stop (slot: Slot): Promise<void> {
  const w = slot.worker
  if (w === null) return
  const exited = new Promise<void>(resolve => { w.once('exit', () => { resolve() }) })
  w.postMessage({ t: 'close' } satisfies ToThread)
  await exited
}

function threadFile (): string {
  // Compiled: startup/gateway-thread.js (it composes the gateway with the portal). From sources (tests), the .ts.
  const js = fileURLToPath(new URL('../../startup/gateway-thread.js', import.meta.url))
  return fs.existsSync(js) ? js : js.replace(/\.js$/, '.ts')
}
