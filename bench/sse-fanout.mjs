// How long one change takes to reach many event-stream subscribers (goal: 10,000 in < 100 ms).
//
//   npm run build && node bench/sse-fanout.mjs [embedded|postgres|reference|reference-uws|reference-cluster] [subscribers=10000] [changes=5]
//
// `reference` measures the same readers against the least a Node.js server can do (a plain
// node:http server writing one pre-encoded frame, its chunk framing included, straight to every
// stream's socket in a loop; until 2026-11-27 it went through res.write): the floor this
// machine and measurement set for a single-threaded Node.js fan-out. `reference-uws` is the same
// server on uWebSockets.js (the gateway's listener), to tell whether another HTTP layer would lower it;
// `reference-cluster` the node:http reference in two processes sharing the streams, to tell whether
// sending from both cores would.
//
// Starts the compiled service in this process the way `npm start` does (request log on, memory
// cache), with SSE_MAX_STREAMS and SSE_MAX_STREAMS_PER_USER raised to the subscriber count. Child
// processes open the subscribers (raw sockets, one GET /api/v1/events/stream each with a viewer token) so
// that their reading does not run on the service's loop. They share the host's cores with the service
// and are kept cheap: since 2026-11-27 every socket reads into one shared buffer (net's `onread`) and
// looks for its marker in the bytes, where each read used to allocate and be decoded to a string
// (about a third less reader CPU per change; the service's work is the same either way).
// Then, <changes> times, this process creates a collection through the management API and the children record, per subscriber, the wall
// clock when the change's event arrived (told apart by its actor_sub). Reported per change: time from the start of the POST to
// its answer, from the start of the POST to the event at the first, median, 99th percentile and last
// subscriber (all subscribers must receive it), the spread from the first to the last (the fan-out itself), and the CPU time the service's
// process spent from the POST until the last subscriber had the event (all its threads), and the CPU time
// the reader processes spent from being told which change to expect until their last subscriber had it
// (what the measurement itself takes from the same cores). Prints one JSON object.
import { fork } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'
import { createBenchDatabase } from './service-client.mjs'

const wall = () => performance.timeOrigin + performance.now()

// The reference servers' request handler: a GET is a stream whose socket is kept in `streams`; a
// POST is answered 201, then its event's frame, encoded once with its HTTP/1.1 chunk framing, goes
// to `published` (and from there straight to the sockets).
function referenceHandler (streams, published) {
  return (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.write(': open\n\n')
      const socket = res.socket
      streams.add(socket)
      req.on('close', () => streams.delete(socket))
      return
    }
    const actor = String(req.headers.authorization).slice('Bearer '.length)
    req.resume()
    req.on('end', () => {
      const id = crypto.randomUUID()
      res.writeHead(201, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id }))
      const frame = `id: 1\nevent: change\ndata: ${JSON.stringify({ resource_kind: 'collection', action: 'created', id, actor_sub: actor })}\n\n`
      published(Buffer.from(`${Buffer.byteLength(frame).toString(16)}\r\n${frame}\r\n`))
    })
  }
}

if (process.argv[2] === '--cluster-server') {
  // A reference-cluster process: the node:http reference holding its share of the streams; a frame
  // comes from the primary (relayed from whichever process took the POST) or from its own POST.
  const streams = new Set()
  const fanOut = frame => { for (const s of streams) s.write(frame) }
  process.on('message', m => { if (m.frame !== undefined) fanOut(Buffer.from(m.frame, 'latin1')) })
  const server = http.createServer(referenceHandler(streams, frame => { process.send({ relay: frame.toString('latin1') }); fanOut(frame) }))
  server.listen(0, '127.0.0.1', () => { process.send({ port: server.address().port }) })
} else if (process.argv[2] === '--subscribers') {
  // Child: open the subscribers, then report when each change's event reaches each of them.
  const [, , , port, token, count] = process.argv
  const n = Number(count)
  const sockets = []
  let opened = 0
  let pending = null // { marker, at: Float64Array, got }
  const head = `GET /api/v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`
  // Each socket reads into one buffer shared by all (net's `onread`): no allocation or string
  // decoding per read, so the readers take as little of the shared cores as Node.js allows. A frame
  // is one write of a few hundred bytes, so it arrives in one read; the marker is looked for in it.
  const readBuf = Buffer.alloc(64 * 1024)
  const openOne = i => new Promise((resolve, reject) => {
    let ok = false
    const s = net.connect({
      port: Number(port),
      host: '127.0.0.1',
      onread: {
        buffer: readBuf,
        callback: nread => {
          if (!ok) {
            if (nread < 12 || readBuf.toString('latin1', 0, 12) !== 'HTTP/1.1 200') { reject(new Error(`subscriber ${i}: ${readBuf.toString('latin1', 0, Math.min(nread, 80)).split('\r\n')[0]}`)); return }
            ok = true; opened++; resolve()
          }
          if (pending !== null && Number.isNaN(pending.at[i])) {
            if (readBuf.subarray(0, nread).indexOf(pending.marker) >= 0) { pending.at[i] = wall(); pending.got++; if (pending.got === n) pending.done() }
          }
        }
      }
    })
    s.on('error', reject)
    s.write(head)
    sockets.push(s)
  })
  for (let i = 0; i < n; i += 200) await Promise.all(Array.from({ length: Math.min(200, n - i) }, (_, k) => openOne(i + k)))
  process.send({ ready: opened })
  process.on('message', m => {
    if (m.expect !== undefined) {
      const at = new Float64Array(n).fill(NaN)
      const timer = setTimeout(() => { pending.done() }, 10_000)
      const cpu0 = process.cpuUsage()
      pending = { marker: Buffer.from(m.expect), at, got: 0, done: () => { clearTimeout(timer); const p = pending; pending = null; const cpu = process.cpuUsage(cpu0); process.send({ times: Array.from(p.at), got: p.got, cpu_ms: (cpu.user + cpu.system) / 1000 }) } }
      process.send({ armed: true })
    }
    if (m.exit === true) { for (const s of sockets) s.destroy(); process.exit(0) }
  })
} else {
  const variant = process.argv[2] ?? 'embedded'
  const N = Number(process.argv[3] ?? 10_000)
  const changes = Number(process.argv[4] ?? 5)
  let dropDb = async () => {}
  const service = variant === 'reference' ? await referenceServer() : variant === 'reference-uws' ? await referenceUws() : variant === 'reference-cluster' ? await referenceCluster() : await startService()
  async function startService () {
    const { loadConfig } = await import('../dist/src/main/config/config.js')
    const { start } = await import('../dist/src/main/server.js')
    const { createLogger } = await import('../dist/src/main/logger.js')
    const env = { HOST: '127.0.0.1', GATEWAY_PORT: '0', MANAGEMENT_PORT: '0', LOG_LEVEL: 'warn', SSE_MAX_STREAMS: String(N + 10), SSE_MAX_STREAMS_PER_USER: String(N + 10) }
    if (variant === 'postgres') {
      const db = await createBenchDatabase('gh_fanout')
      env.DATABASE_URL = db.url
      dropDb = db.drop
    } else {
      env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-fanout-'))
    }
    const config = loadConfig(env)
    return await start(config, { logger: createLogger(config) })
  }
  // The reference: the least a Node.js server can do for the same readers. A plain node:http server
  // holds the streams; each POST is answered 201, then one frame, encoded once, is written to every
  // stream in a loop. No store, no authentication, no event hub.
  async function referenceServer () {
    const streams = new Set()
    const server = http.createServer(referenceHandler(streams, frame => { for (const s of streams) s.write(frame) }))
    server.maxConnections = N + 100
    await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
    return { managementPort: server.address().port, issueToken: async sub => sub, close: async () => { for (const s of streams) s.destroy(); server.close() } }
  }
  // The same reference on uWebSockets.js (the gateway's listener), whose writes go to the socket
  // without node:http's stream layers: whether another HTTP layer lowers the floor (bench/RESULTS.md).
  async function referenceUws () {
    const { default: uWS } = await import('uWebSockets.js')
    const streams = new Set()
    const app = uWS.App()
    app.get('/*', res => {
      res.onAborted(() => streams.delete(res))
      res.cork(() => { res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-cache').write(': open\n\n') })
      streams.add(res)
    })
    app.post('/*', (res, req) => {
      const actor = req.getHeader('authorization').slice('Bearer '.length)
      let aborted = false
      res.onAborted(() => { aborted = true })
      res.onData((_chunk, last) => {
        if (!last || aborted) return
        const id = crypto.randomUUID()
        res.cork(() => { res.writeStatus('201 Created').writeHeader('content-type', 'application/json').end(JSON.stringify({ id })) })
        const frame = Buffer.from(`id: 1\nevent: change\ndata: ${JSON.stringify({ resource_kind: 'collection', action: 'created', id, actor_sub: actor })}\n\n`)
        for (const s of streams) s.cork(() => s.write(frame))
      })
    })
    const listen = await new Promise(resolve => app.listen('127.0.0.1', 0, resolve))
    const port = uWS.us_socket_local_port(listen)
    return { managementPort: port, issueToken: async sub => sub, close: async () => { for (const s of streams) s.close(); uWS.us_listen_socket_close(listen) } }
  }
  // The node:http reference in two processes (node:cluster; the primary, this process, hands each
  // new connection to one of them in turn), so that the streams' sends run on both cores; the
  // process that takes a POST writes to its streams and the primary relays the frame to the other.
  async function referenceCluster () {
    const { default: cluster } = await import('node:cluster')
    cluster.setupPrimary({ exec: new URL(import.meta.url).pathname, args: ['--cluster-server'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const workers = [cluster.fork(), cluster.fork()]
    const ports = await Promise.all(workers.map(w => new Promise(resolve => w.once('message', m => resolve(m.port)))))
    for (const w of workers) w.on('message', m => { if (m.relay !== undefined) for (const o of workers) if (o !== w) o.send({ frame: m.relay }) })
    return { managementPort: ports[0], issueToken: async sub => sub, close: async () => { for (const w of workers) w.kill() } }
  }
  // One admin per change: the event carries its actor_sub, which tells the subscribers which change it is.
  const admins = []
  for (let i = 0; i < changes; i++) admins.push(await service.issueToken(`bench-admin-${i}-${process.pid}`, 'admin'))
  const viewer = await service.issueToken('bench-viewer', 'viewer')

  const post = (admin, body) => new Promise((resolve, reject) => {
    const data = JSON.stringify(body)
    const req = http.request({ host: '127.0.0.1', port: service.managementPort, method: 'POST', path: '/api/v1/collections', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', d => { text += d })
      res.on('end', () => { res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text}`)) })
    })
    req.on('error', reject)
    req.end(data)
  })

  // Readers in several processes (SSE_READERS, default 2): one process reading 10,000 sockets would
  // itself take longer than the fan-out it measures.
  const readers = Number(process.env.SSE_READERS ?? 2)
  const children = Array.from({ length: readers }, (_, k) => {
    const share = Math.floor(N / readers) + (k < N % readers ? 1 : 0)
    return fork(new URL(import.meta.url).pathname, ['--subscribers', String(service.managementPort), viewer, String(share)], { stdio: 'inherit' })
  })
  const next = child => new Promise(resolve => child.once('message', resolve))
  const all = async () => await Promise.all(children.map(next))
  const tOpen = wall()
  const ready = (await all()).reduce((n, m) => n + m.ready, 0)
  const msToOpen = Math.round(wall() - tOpen)
  const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
  // SSE_PROFILE=<file>: a CPU profile of the service's main thread over the changes only.
  let session = null
  if (process.env.SSE_PROFILE) {
    const { Session } = await import('node:inspector/promises')
    session = new Session(); session.connect()
    await session.post('Profiler.enable'); await session.post('Profiler.start')
  }
  const results = []
  for (let i = 0; i < changes; i++) {
    const name = `fanout-${i}-${process.pid}`
    const armed = all()
    for (const c of children) c.send({ expect: `"actor_sub":"bench-admin-${i}-${process.pid}"` })
    await armed
    const reports = all()
    const cpu0 = process.cpuUsage()
    const t0 = wall()
    const created = await post(admins[i], { name, base_path: `/fanout-${i}`, upstream_url: 'http://127.0.0.1:9/', auth_required: false })
    const tAnswer = wall()
    const got = await reports
    const cpu = process.cpuUsage(cpu0)
    const lat = got.flatMap(m => m.times).filter(x => x !== null && !Number.isNaN(x)).map(x => x - t0).sort((a, b) => a - b)
    results.push({ id: created.id, post_ms: +(tAnswer - t0).toFixed(1), received: got.reduce((n, m) => n + m.got, 0), first_ms: +lat[0].toFixed(1), p50_ms: +pct(lat, 0.5).toFixed(1), p99_ms: +pct(lat, 0.99).toFixed(1), last_ms: +lat[lat.length - 1].toFixed(1), spread_ms: +(lat[lat.length - 1] - lat[0]).toFixed(1), service_cpu_ms: +((cpu.user + cpu.system) / 1000).toFixed(1), readers_cpu_ms: +got.reduce((n, m) => n + m.cpu_ms, 0).toFixed(1) })
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  if (session !== null) fs.writeFileSync(process.env.SSE_PROFILE, JSON.stringify((await session.post('Profiler.stop')).profile))
  for (const c of children) c.send({ exit: true })
  await service.close()
  await dropDb()
  const median = key => { const v = results.map(r => r[key]).sort((a, b) => a - b); return v[Math.floor(v.length / 2)] }
  console.log(JSON.stringify({ variant, subscribers: N, readers, opened: ready, ms_to_open: msToOpen, changes: results, median_last_ms: median('last_ms'), median_p50_ms: median('p50_ms'), median_post_ms: median('post_ms'), median_spread_ms: median('spread_ms'), median_service_cpu_ms: median('service_cpu_ms'), median_readers_cpu_ms: median('readers_cpu_ms') }))
  process.exit(0)
}
