/**
 * The entry of a gateway thread (GATEWAY_THREADS > 1; started by gateway/threads/pool.ts): one more uWebSockets.js app, on its own worker thread,
 * listening on the main thread's port (SO_REUSEPORT) with the same compiled route table. It serves
 * forwards, the response cache, WebSocket relays and the portal itself; a proxy's workflow, the
 * gateway MCP and the portal assistant are answered by the main thread (relayed over this port).
 * Its request records and JSON log lines go to the main thread in batches; rate limits and quotas
 * count in the shared table (or Redis); configuration changes arrive as the main thread applies
 * them and are acknowledged with their version.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads'
import { AppError } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import { createSharedMemoryLimiter } from '../cache/shared-memory-limiter.js'
import { createRedis } from '../cache/redis.js'
import { createRedisLimiter } from '../cache/redis-limiter.js'
import type { RateLimiter } from '../cache/types.js'
import { createLogger } from '../logger.js'
import type { RequestRecord } from '../store/request-record.js'
import { createTracer } from '../observability/tracing/tracer.js'
import { createPortal } from '../static/portal.js'
import { builtUiDir, loadStaticFiles } from '../static/static-files.js'
import { createGateway, type GatewayOptions } from '../gateway/index.js'
import type { WebHandler } from '../gateway/mcp-route.js'
import { ResponseCache } from '../gateway/responses/response-cache.js'
import { createRedisStore, createThreadStore, fromWire as entryFromWire, toWire, type CacheEntry, type WireCacheEntry } from '../gateway/responses/cache-store.js'
import type { AccessMessage, CacheAnswer, CacheRequest, FromThread, ThreadData, ToThread, WireError } from '../gateway/threads/messages.js'
import { encodeRecords } from '../gateway/threads/records.js'
import type { HealthReport } from '../gateway/upstreams/health.js'

const data = workerData as ThreadData
const port = parentPort!
const send = (m: FromThread, transfer?: ArrayBuffer[]) => { port.postMessage(m, transfer ?? []) }
const { config } = data

// JSON lines go to the main thread's writer with the records (below): every 50 ms, or at 64 KiB
// of text. A message a turn woke the main thread thousands of times a second at full load.
let logText = ''
let records: RequestRecord[] = []
let quotas: Array<[string, string, number, number]> = []
let cacheCounts = new Map<string, [number, number, number]>()
let flushTimer: NodeJS.Timeout | null = null
const logger = createLogger(config, {
  write (text: string) { logText += text; if (logText.length >= 65_536) flushObserved(); else soon() },
  flush (cb?: (err?: Error) => void) { flushObserved(); cb?.() },
  flushSync () { flushObserved() }
}).child({ thread: data.index })

// Calls answered by the main thread.
let nextId = 0
const calls = new Map<number, { resolve: (v: unknown) => void, reject: (e: unknown) => void }>()
const call = async (op: 'workflow' | 'readiness', args: unknown[]): Promise<unknown> => await new Promise((resolve, reject) => {
  const id = ++nextId
  calls.set(id, { resolve, reject })
  send({ t: 'call', id, op, args })
})
const fromWire = (e: WireError) => new AppError(e.status, e.code, e.message, e.details, e.headers)

// Finished requests, admitted quota hits and log lines, sent in batches (every 50 ms, or at 256
// records), the records as columns (gateway/threads/records.ts: a sixth of structured-cloning them).
function flushObserved (): void {
  if (flushTimer !== null) { clearTimeout(flushTimer); flushTimer = null }
  if (logText !== '') { send({ t: 'log', text: logText }); logText = '' }
  if (records.length === 0 && quotas.length === 0 && cacheCounts.size === 0) return
  const batch = encodeRecords(records)
  const cache = [...cacheCounts].map(([id, c]) => [id, ...c] as [string, number, number, number])
  send({ t: 'obs', records: batch, quotas, shed: gateway.shed, cache }, [batch.nums.buffer as ArrayBuffer, batch.refs.buffer as ArrayBuffer])
  records = []
  quotas = []
  cacheCounts = new Map()
}
function soon (): void { flushTimer ??= setTimeout(flushObserved, 50) }

// Response-cache counts go to the main thread's /metrics with the records.
const countCache = (proxyId: string, what: 'hit' | 'miss' | 'stored') => {
  let c = cacheCounts.get(proxyId)
  if (c === undefined) cacheCounts.set(proxyId, c = [0, 0, 0])
  c[what === 'hit' ? 0 : what === 'miss' ? 1 : 2]++
  soon()
}

// CACHE_TYPE=memory: the process's one response cache is the main thread's; a lookup is a round trip.
// Lookups of one turn of the loop go in one message (sent from setImmediate, after the turn's
// sockets were read): under load, one round trip for many requests.
const cacheGets = new Map<number, Array<(e: CacheEntry | null) => void>>()
let cacheIds = 0
let askKeys: string[] = []
let askResolves: Array<(e: CacheEntry | null) => void> = []
const threadStore = (cachePort: MessagePort) => {
  cachePort.on('message', (m: CacheAnswer) => {
    const resolves = cacheGets.get(m.id)
    cacheGets.delete(m.id)
    if (resolves === undefined) return
    // One entry object per key of the batch: its requests share the entry and its memo.
    const made = new Map<WireCacheEntry, CacheEntry>()
    for (let i = 0; i < resolves.length; i++) {
      const e = m.entries[i] ?? null
      if (e === null) { resolves[i]!(null); continue }
      let entry = made.get(e)
      if (entry === undefined) made.set(e, entry = entryFromWire(e))
      resolves[i]!(entry)
    }
  })
  // Lookups keep the port listening; it must not keep a closing thread alive by itself.
  cachePort.unref()
  const ask = () => {
    const id = ++cacheIds
    cacheGets.set(id, askResolves)
    cachePort.postMessage({ t: 'get', id, keys: askKeys } satisfies CacheRequest)
    askKeys = []
    askResolves = []
  }
  return createThreadStore(
    async (_proxyId, key) => await new Promise<CacheEntry | null>(resolve => {
      if (askKeys.length === 0) setImmediate(ask)
      askKeys.push(key)
      askResolves.push(resolve)
    }),
    (proxyId, key, entry) => {
      const [wire, transfer] = toWire(entry)
      cachePort.postMessage({ t: 'set', proxyId, key, entry: wire } satisfies CacheRequest, transfer)
    })
}

let limiter: RateLimiter
let responseCache: ResponseCache | undefined
let closeRedis = async (): Promise<void> => {}
if (data.limiterMemory !== null) {
  const shared = createSharedMemoryLimiter(data.limiterMemory)
  shared.quotas.listen((key, stamp, endMs, cost) => { quotas.push([key, stamp, endMs, cost]); soon() })
  limiter = shared
  if (data.cachePort !== null) responseCache = new ResponseCache(threadStore(data.cachePort), config.RESPONSE_CACHE_MAX_ENTRY_BYTES, countCache)
} else {
  // CACHE_TYPE=redis: one connection per gateway thread for its limits and cached answers.
  const redis = createRedis(config, logger)
  closeRedis = async () => { await redis.quit().catch(() => redis.disconnect()) }
  const prefix = data.keyPrefix ?? 'gatehouse:'
  limiter = createRedisLimiter(redis, logger, { keyPrefix: prefix })
  responseCache = new ResponseCache(createRedisStore(redis, prefix, logger), config.RESPONSE_CACHE_MAX_ENTRY_BYTES, countCache)
}

let access: AccessMessage = data.access
const collections = new Map<string, Collection>(data.collections.map(c => [c.id, c]))
const proxies = new Map<string, Proxy>(data.proxies.map(p => [p.id, p]))
const portal = createPortal(loadStaticFiles(builtUiDir('portal'), { spa: false }))
const portalView = () => {
  const cs = [...collections.values()]
  const ps = [...proxies.values()]
  portal.setRoutes({ collections: () => cs, proxies: () => ps })
}
portalView()

const web = new Map<number, { resolve: (r: Response) => void, reject: (e: unknown) => void, stream: ReadableStreamDefaultController<Uint8Array> | null }>()
const relayWeb = (path: string): WebHandler => async (req, peer) => {
  const body = req.method === 'GET' || req.method === 'HEAD' ? null : new Uint8Array(await req.arrayBuffer())
  const id = ++nextId
  const answer = new Promise<Response>((resolve, reject) => { web.set(id, { resolve, reject, stream: null }) })
  send({ t: 'web', id, path, method: req.method, url: req.url, headers: [...req.headers], body, peer }, body === null ? [] : [body.buffer as ArrayBuffer])
  return await answer
}

// Passive upstream outcomes go to the main thread, which judges for the process: a turn's in one message.
let healthReports: HealthReport[] = []
const reportHealth = (r: HealthReport) => {
  if (healthReports.length === 0) setImmediate(() => { send({ t: 'health', reports: healthReports }); healthReports = [] })
  healthReports.push(r)
}

const options: GatewayOptions = {
  config,
  logger,
  env: data.env,
  hopSecret: data.hopSecret,
  portSharing: 'join',
  readiness: async () => await call('readiness', []) as { ok: boolean, checks: Record<string, string> },
  observe: r => { records.push(r); if (records.length >= 256) flushObserved(); else soon() },
  workflows: async (route, trigger, trace) => await call('workflow', [{ proxy: route.proxy, workflow: route.workflow }, trigger, trace]) as { status: number, headers: Record<string, string>, body: unknown },
  access: { profiles: () => access.profiles, policies: () => access.policies, limiter },
  tracer: createTracer(config, logger),
  responseCache,
  mount: portal.attach,
  webRoutes: data.webPaths.map(path => ({ path, handler: relayWeb(path) })),
  upstreamShare: { report: reportHealth }
}
const gateway = createGateway(options)
gateway.upstreams.apply(data.health)
gateway.setRoutes(data.collections, data.proxies)

// A crash closes this thread's listener and connections first: a worker thread that ends with a
// uWS app open takes the whole process down (uv_loop_close with open handles).
process.on('uncaughtException', err => {
  try { gateway.abort() } catch {}
  logger.fatal({ err }, `gateway thread ${data.index} crashed`)
  logger.flush()
  process.exit(1)
})

port.on('message', (m: ToThread) => {
  switch (m.t) {
    case 'routes':
      if (m.full) {
        gateway.setRoutes(m.collections, m.proxies)
        collections.clear(); proxies.clear()
        for (const c of m.collections) collections.set(c.id, c)
        for (const p of m.proxies) proxies.set(p.id, p)
      } else {
        gateway.updateRoutes(m.delta)
        for (const id of m.delta.removedCollections ?? []) collections.delete(id)
        for (const id of m.delta.removedProxies ?? []) proxies.delete(id)
        for (const c of m.delta.collections ?? []) collections.set(c.id, c)
        for (const p of m.delta.proxies ?? []) proxies.set(p.id, p)
      }
      portalView()
      send({ t: 'ack', v: m.v })
      break
    case 'access':
      access = m.access
      send({ t: 'ack', v: m.v })
      break
    case 'health': gateway.upstreams.apply(m.changes); break
    case 'purge':
      void gateway.responseCache.purge(m.proxyId)
      break
    case 'reply': {
      const c = calls.get(m.id)
      calls.delete(m.id)
      if (c !== undefined) { if (m.ok) c.resolve(m.value); else c.reject(fromWire(m.error)) }
      break
    }
    case 'web-head': {
      const w = web.get(m.id)
      if (w === undefined) break
      const nullBody = m.status === 204 || m.status === 205 || m.status === 304
      const stream = nullBody
        ? null
        : new ReadableStream<Uint8Array>({
          start: c => { w.stream = c },
          cancel: () => { web.delete(m.id); send({ t: 'web-cancel', id: m.id }) }
        })
      if (nullBody) web.delete(m.id)
      w.resolve(new Response(stream, { status: m.status, headers: m.headers }))
      break
    }
    case 'web-chunk': web.get(m.id)?.stream?.enqueue(m.chunk); break
    case 'web-end': { const w = web.get(m.id); web.delete(m.id); w?.stream?.close(); break }
    case 'web-error': {
      const w = web.get(m.id)
      web.delete(m.id)
      if (w?.stream != null) w.stream.error(new Error(m.message)); else w?.reject(new Error(m.message))
      break
    }
    case 'crash':
      // Test hook (reached only through the in-process handle): a crash as an uncaught error has it.
      setImmediate(() => { throw new Error('gateway thread crash requested') })
      break
    case 'close':
      void gateway.close().then(async () => {
        flushObserved()
        logger.flush()
        await closeRedis()
        send({ t: 'closed' })
        // The app is closed: this thread may end (its pending messages are already queued).
        setImmediate(() => process.exit(0))
      })
      break
  }
})

const { port: listening } = await gateway.listen()
send({ t: 'ack', v: data.version })
send({ t: 'ready', port: listening })
