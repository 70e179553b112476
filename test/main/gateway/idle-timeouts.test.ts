/**
 * Idle timeouts once a backend has answered its head: a backend that stalls mid-body, and a client
 * that stops reading, no longer hold the client connection and a backend socket forever; a client
 * that reads slowly but steadily is never cut, however long the gateway holds the backend paused.
 */
import crypto from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'
import t from 'tap'
import { collection, proxy, startGateway } from '../../helpers/gateway.js'
import { splitAnswer } from '../../helpers/raw-http.js'
import { eventually } from '../../helpers/wait.js'

async function server (t: { teardown (fn: () => unknown): void }, handler: http.RequestListener) {
  const s = http.createServer(handler)
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { s.closeAllConnections(); s.close() })
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

t.test('a backend that stalls after its head: the client connection is cut after the idle time', async t => {
  let backendClosed = false
  const url = await server(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('first part\n')
    req.socket.on('close', () => { backendClosed = true })
    // ...and nothing more, ever.
  })
  const { gateway, url: gw } = await startGateway(t)
  const c = collection({ base_path: '/slow', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/stall', target_path: '/stall', timeout_ms: 500 })])
  const started = Date.now()
  // identity: a compressible answer of unannounced length is held until it passes COMPRESSION_MIN_BYTES.
  const res = await fetch(`${gw}/slow/stall`, { headers: { 'accept-encoding': 'identity' } })
  t.equal(res.status, 200, 'the head was relayed')
  await t.rejects(res.text(), 'the body never completes: the connection is cut instead of hanging')
  t.ok(Date.now() - started < 20_000, 'well before any client-side timeout')
  t.ok(await eventually(() => backendClosed), 'the backend socket is released')
})

t.test('a backend that keeps sending is not cut, however long the answer takes', async t => {
  const url = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    let n = 0
    const tick = setInterval(() => { res.write(`chunk ${n}\n`); if (++n === 8) { clearInterval(tick); res.end('done\n') } }, 200)
  })
  const { gateway, url: gw } = await startGateway(t)
  const c = collection({ base_path: '/drip', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/x', target_path: '/x', timeout_ms: 500 })])
  const text = await (await fetch(`${gw}/drip/x`)).text()
  t.match(text, /chunk 7\ndone/, '1.6 s in all, never idle for 500 ms')
})

t.test('a client that stops reading: the backend socket is released after the client stall limit (10 s)', async t => {
  let backendClosed = false
  let sent = 0
  const url = await server(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    req.socket.on('close', () => { backendClosed = true })
    const chunk = Buffer.alloc(64 * 1024, 120)
    const pump = () => {
      while (!backendClosed && sent < 256 * 1024 * 1024) {
        sent += chunk.length
        if (!res.write(chunk)) { res.once('drain', pump); return }
      }
    }
    pump()
  })
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/big', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/file', target_path: '/file', timeout_ms: 500 })])
  const client = net.connect(port, '127.0.0.1')
  t.teardown(() => { client.destroy() })
  await new Promise<void>(resolve => client.once('connect', () => resolve()))
  client.write('GET /big/file HTTP/1.1\r\nhost: x\r\n\r\n')
  client.pause() // reads nothing more: buffers fill up, the gateway stops reading the backend
  t.ok(await eventually(() => backendClosed), 'the backend connection was closed rather than held for a client that reads nothing')
  t.ok(sent < 256 * 1024 * 1024, 'long before the whole body')
})

const MiB = 1024 * 1024
const BLOCK = crypto.randomBytes(MiB)

/**
 * A backend sending `size` bytes as fast as its socket takes them (Content-Length, or chunked when
 * `length` is false), or only `stopAt` bytes and then nothing, ever. Answers the SHA-256 of the
 * whole body in a header.
 */
async function bigAnswer (t: { teardown (fn: () => unknown): void }, size: number, opts: { length: boolean, stopAt?: number, type?: string }) {
  const hash = crypto.createHash('sha256')
  for (let at = 0; at < size; at += MiB) hash.update(BLOCK.subarray(0, Math.min(MiB, size - at)))
  const sha256 = hash.digest('hex')
  const backend = { closed: false }
  const url = await server(t, (req, res) => {
    req.socket.on('close', () => { backend.closed = true })
    res.writeHead(200, { 'content-type': opts.type ?? 'application/octet-stream', 'x-sha256': sha256, ...(opts.length ? { 'content-length': String(size) } : {}) })
    let at = 0
    const limit = opts.stopAt ?? size
    const pump = () => {
      while (at < limit && !backend.closed) {
        const n = Math.min(64 * 1024, limit - at, MiB - (at % MiB))
        const ok = res.write(BLOCK.subarray(at % MiB, (at % MiB) + n))
        at += n
        if (!ok) { res.once('drain', pump); return }
      }
      if (at === size) res.end()
    }
    pump()
  })
  return { url, sha256, backend }
}

/** A client reading at most `bytesPerSecond` on average (a raw socket, paused when ahead of its pace). */
async function slowRead (port: number, path: string, bytesPerSecond: number, deadlineMs: number, extra = ''): Promise<{ status: number, head: string, body: Buffer, ms: number, closed: boolean }> {
  const client = net.connect(port, '127.0.0.1')
  client.on('error', () => {})
  await new Promise<void>(resolve => client.once('connect', () => resolve()))
  const started = Date.now()
  const parts: Buffer[] = []
  let got = 0
  client.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${extra}\r\n`)
  client.on('data', (d: Buffer) => {
    parts.push(d)
    got += d.length
    const ahead = got / bytesPerSecond * 1000 - (Date.now() - started)
    if (ahead > 0) { client.pause(); setTimeout(() => client.resume(), ahead) }
  })
  const closed = await new Promise<boolean>(resolve => {
    const timer = setTimeout(() => resolve(false), deadlineMs)
    client.once('close', () => { clearTimeout(timer); resolve(true) })
  })
  client.destroy()
  return { ...splitAnswer(Buffer.concat(parts)), ms: Date.now() - started, closed }
}

for (const length of [true, false]) {
  t.test(`a slow but steady reader gets the whole answer (${length ? 'Content-Length' : 'chunked'}), however long the gateway holds the backend paused`, async t => {
    const size = 12 * MiB
    const { url, sha256 } = await bigAnswer(t, size, { length })
    const { gateway, port } = await startGateway(t)
    const c = collection({ base_path: '/dl', upstream_url: url })
    // 300 ms of idle time; the reader takes about 8 s, and its buffers stay full for far longer than that at a time.
    gateway.setRoutes([c], [proxy(c, { path: '/file', target_path: '/file', timeout_ms: 300 })])
    const r = await slowRead(port, '/dl/file', 1.5 * MiB, 120_000)
    t.equal(r.status, 200)
    t.equal(r.body.length, size, `all ${size} bytes arrived (in ${r.ms} ms)`)
    t.equal(crypto.createHash('sha256').update(r.body).digest('hex'), sha256, 'as the backend sent them')
    t.ok(r.ms > 4000, 'the reader was slow: the backend was paused longer than the timeout')
  })
}

t.test('a slow but steady reader gets the whole answer compressed on the way (gzip, as it comes)', async t => {
  const size = 12 * MiB
  // Random bytes labelled text: compressed as they come (unknown length), and hardly smaller.
  const { url, sha256 } = await bigAnswer(t, size, { length: false, type: 'text/plain' })
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/dl', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/file', target_path: '/file', timeout_ms: 300 })])
  const r = await slowRead(port, '/dl/file', 1.5 * MiB, 120_000, 'accept-encoding: gzip\r\n')
  t.equal(r.status, 200)
  t.match(r.head, /\r\ncontent-encoding: gzip\r\n/i, 'compressed by the gateway')
  let plain = Buffer.alloc(0)
  try { plain = zlib.gunzipSync(r.body) } catch (err) { t.fail(`the gzip stream is incomplete (${r.body.length} bytes): ${(err as Error).message}`) }
  t.equal(plain.length, size, `all ${size} bytes arrived (in ${r.ms} ms)`)
  t.equal(crypto.createHash('sha256').update(plain).digest('hex'), sha256, 'as the backend sent them')
})

t.test('a backend that goes silent mid-answer is still cut at the timeout while the client reads slowly', async t => {
  const size = 12 * MiB
  const { url, backend } = await bigAnswer(t, size, { length: true, stopAt: 6 * MiB })
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/dl', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/file', target_path: '/file', timeout_ms: 300 })])
  const r = await slowRead(port, '/dl/file', 1.5 * MiB, 120_000)
  t.equal(r.status, 200, 'the answer started')
  t.ok(r.closed, 'the gateway closed the connection')
  t.ok(r.body.length <= 6 * MiB, `the answer was cut: ${r.body.length} of ${size} bytes`)
  t.ok(await eventually(() => backend.closed, undefined, 100), 'the backend connection is closed')
})
