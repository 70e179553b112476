/**
 * Request bodies through streamed proxies arrive byte for byte as sent, whatever the client's
 * chunking, size and pace and the backend's backpressure. The client is a raw socket whose
 * chunk boundaries and write boundaries are random and independent (a chunk-size line may be
 * split across writes); the backend is node:http with its default strict parser, pausing its
 * reads now and then, and answers the SHA-256 of the body it parsed.
 */
import crypto from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { collection, proxy, startGateway } from '../../helpers/gateway.js'
import { prng } from '../../helpers/prng.js'
import { dechunk } from '../../helpers/raw-http.js'

const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Body bytes are slices of this random block at random offsets. */
const POOL = crypto.randomBytes(2 * MiB)

interface Parsed { bytes: number, sha256: string, framing: string }

/**
 * A strict backend: node:http's own parser (no insecureHTTPParser), which refuses a misframed
 * chunked body with 400 HPE_*. Pauses its reads for `pauseMs` every `pauseEvery` bytes (headers
 * x-pause-every / x-pause-ms), so the gateway's writes meet backpressure.
 */
async function strictBackend (t: Test): Promise<{ url: string, parseErrors: string[] }> {
  const parseErrors: string[] = []
  const server = http.createServer((req, res) => {
    const hash = crypto.createHash('sha256')
    const every = Number(req.headers['x-pause-every'] ?? 0)
    const pauseMs = Number(req.headers['x-pause-ms'] ?? 0)
    let bytes = 0
    let nextPause = every
    req.on('data', (c: Buffer) => {
      hash.update(c)
      bytes += c.length
      if (every > 0 && bytes >= nextPause) {
        nextPause = bytes + every
        req.pause()
        setTimeout(() => req.resume(), pauseMs)
      }
    })
    req.on('end', () => {
      const framing = req.headers['transfer-encoding'] ?? `length ${req.headers['content-length'] ?? 'none'}`
      const parsed: Parsed = { bytes, sha256: hash.digest('hex'), framing }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(parsed))
    })
  })
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    parseErrors.push(String(err.code ?? err.message))
    if (socket.writable) socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: ${String(err.code).length}\r\nconnection: close\r\n\r\n${String(err.code)}`)
    else socket.destroy()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, parseErrors }
}

interface Upload {
  size: number
  chunked: boolean
  seed: number
  /** Largest chunk (chunked) and largest single write, in bytes. */
  maxChunk: number
  maxWrite: number
  /** Chance of a pause (1-30 ms) after a write. */
  pauseChance: number
  pauseEvery: number
  pauseMs: number
}

interface Outcome { status: number, body: string, sent: number, sha256: string, ms: number }

/** Uploads `size` bytes through the gateway on one raw connection and reads the answer. */
async function upload (port: number, path: string, u: Upload): Promise<Outcome> {
  const rnd = prng(u.seed)
  const t0 = Date.now()
  const hash = crypto.createHash('sha256')
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => {})
  await new Promise<void>(resolve => socket.once('connect', () => resolve()))
  let answer = Buffer.alloc(0)
  let done: ((o: { status: number, body: string }) => void) | null = null
  const answered = new Promise<{ status: number, body: string }>(resolve => { done = resolve })
  const finish = (status: number, body: string) => { if (done !== null) { const d = done; done = null; d({ status, body }) } }
  socket.on('data', (d: Buffer) => {
    answer = Buffer.concat([answer, d])
    const end = answer.indexOf('\r\n\r\n')
    if (end < 0) return
    const head = answer.subarray(0, end).toString('latin1')
    const status = Number(head.slice(9, 12))
    const rest = answer.subarray(end + 4)
    const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? -1)
    if (len >= 0 && rest.length >= len) finish(status, rest.subarray(0, len).toString())
    else if (/\r\ntransfer-encoding: *chunked/i.test(head) && rest.subarray(-5).toString() === '0\r\n\r\n') finish(status, dechunk(rest).toString())
  })
  socket.on('close', () => finish(0, `connection closed; got ${JSON.stringify(answer.toString('latin1').slice(0, 200))}`))

  socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-pause-every: ${u.pauseEvery}\r\nx-pause-ms: ${u.pauseMs}\r\n` +
    (u.chunked ? 'transfer-encoding: chunked\r\n' : `content-length: ${u.size}\r\n`) + '\r\n')
  // The encoded stream (chunk framing and data) is cut into writes of random size, independent of the chunks.
  let pending: Buffer[] = []
  let pendingBytes = 0
  let writeSize = 1 + Math.floor(rnd() * u.maxWrite)
  const flush = async (force: boolean) => {
    while (pendingBytes >= writeSize || (force && pendingBytes > 0)) {
      const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes)
      const n = Math.min(writeSize, all.length)
      pending = n < all.length ? [all.subarray(n)] : []
      pendingBytes = all.length - n
      writeSize = 1 + Math.floor(rnd() * u.maxWrite)
      if (socket.destroyed || done === null) return
      if (!socket.write(all.subarray(0, n))) await new Promise(resolve => { socket.once('drain', resolve); socket.once('close', resolve) })
      if (rnd() < u.pauseChance) await sleep(1 + Math.floor(rnd() * 30))
    }
  }
  // Synchronous unless a write is due: a promise per tiny piece would cost more than the gateway's work.
  const push = (b: Buffer) => { pending.push(b); pendingBytes += b.length; return pendingBytes >= writeSize }
  let sent = 0
  while (sent < u.size && done !== null) {
    // Chunk sizes spread over magnitudes: many tiny ones, some up to maxChunk.
    const n = Math.min(u.size - sent, Math.max(1, Math.floor(u.maxChunk ** rnd())))
    let off = Math.floor(rnd() * (POOL.length - n))
    let left = n
    if (u.chunked && push(Buffer.from(`${n.toString(16)}\r\n`))) await flush(false)
    while (left > 0) {
      const take = Math.min(left, POOL.length - off)
      const data = POOL.subarray(off, off + take)
      hash.update(data)
      if (push(data)) await flush(false)
      left -= take
      off = 0
    }
    if (u.chunked && push(Buffer.from('\r\n'))) await flush(false)
    sent += n
  }
  if (u.chunked) push(Buffer.from('0\r\n\r\n'))
  await flush(true)
  const deadline = setTimeout(() => finish(0, 'no answer within 120 s'), 120_000)
  const res = await answered
  clearTimeout(deadline)
  socket.destroy()
  return { ...res, sent, sha256: hash.digest('hex'), ms: Date.now() - t0 }
}

function check (t: Test, name: string, o: Outcome, chunked: boolean): void {
  t.comment(`${name}: ${o.ms} ms`)
  t.equal(o.status, 200, `${name}: answered 200 (${o.body.slice(0, 120)})`)
  let parsed: Parsed | null = null
  try { parsed = JSON.parse(o.body) as Parsed } catch {}
  t.equal(parsed?.bytes, o.sent, `${name}: the backend parsed ${o.sent} bytes`)
  t.equal(parsed?.sha256, o.sha256, `${name}: the bytes are the ones sent`)
  t.equal(parsed?.framing, chunked ? 'chunked' : `length ${o.sent}`, `${name}: framing`)
}

t.test('uploads through a streaming proxy arrive byte for byte, chunked or not, under backpressure', async t => {
  const backend = await strictBackend(t)
  // The test's own client and backend share the gateway's event loop: shedding on loop delay is off.
  const { gateway, port } = await startGateway(t, {}, { SHED_EVENT_LOOP_DELAY_MS: '0' })
  const c = collection({ base_path: '/up', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/sink', methods: ['POST'], streaming: true, timeout_ms: 60_000 })])
  const base = Number(process.env.UPLOAD_SEED ?? Date.now() % 1_000_000)
  t.comment(`seed ${base} (UPLOAD_SEED=${base} replays this run)`)

  // Large: 100 MiB each way, the backend pausing 100 ms every 8 MiB.
  for (const chunked of [true, false]) {
    const u: Upload = { size: 100 * MiB, chunked, seed: base + (chunked ? 1 : 2), maxChunk: MiB, maxWrite: MiB, pauseChance: 0.002, pauseEvery: 8 * MiB, pauseMs: 100 }
    check(t, `100 MiB ${chunked ? 'chunked' : 'with Content-Length'}`, await upload(port, '/up/big', u), chunked)
  }

  // Many medium uploads, three at a time: random sizes up to 24 MiB, tiny to large chunks and writes, pauses on both sides.
  const jobs: Array<{ name: string, u: Upload }> = []
  for (let i = 0; i < 9; i++) {
    const rnd = prng(base + 100 + i)
    const chunked = i % 3 !== 2
    jobs.push({
      name: `upload ${i}`,
      // Chunks of at most 256 bytes cost the HTTP layers per chunk: those uploads stay under 4 MiB.
      u: { size: 1 + Math.floor(rnd() * (i % 3 === 0 ? 4 : 24) * MiB), chunked, seed: base + 200 + i, maxChunk: [256, 64 * 1024, MiB][i % 3]!, maxWrite: [4096, 256 * 1024, MiB][(i + 1) % 3]!, pauseChance: 0.01, pauseEvery: 2 * MiB, pauseMs: 50 }
    })
  }
  for (let i = 0; i < jobs.length; i += 3) {
    const batch = jobs.slice(i, i + 3)
    const outcomes = await Promise.all(batch.map(j => upload(port, `/up/${j.name.replace(' ', '-')}`, j.u)))
    // One outcome per upload of the batch, in order.
    outcomes.forEach((o, k) => { const b = batch[k]!; check(t, `${b.name} (${b.u.size} bytes, ${b.u.chunked ? 'chunked' : 'Content-Length'})`, o, b.u.chunked) })
  }
  t.same(backend.parseErrors, [], 'the backend never met a framing error')
})
