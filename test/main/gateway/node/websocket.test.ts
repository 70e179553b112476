/**
 * The same suite on the node HTTP layer (GATEWAY_SERVER=node), then what this layer does its own
 * way, against `ws` WebSocket backends on 127.0.0.5-7: the client's handshake reaching the backend
 * (extensions, sub-protocol), a backend's refusal relayed as it answered, no backend contact before
 * the access checks pass, backpressure towards a backend that stops reading, one request-log
 * record per session, and the same relay over TLS_PORT (HTTP/1.1 by ALPN).
 */
import t, { type Test } from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import WebSocket, { WebSocketServer } from 'ws'
import { loadConfig } from '../../../../src/main/config/config.js'
import { createGateway } from '../../../../src/main/gateway/index.js'
import { collection, proxy } from '../../../helpers/gateway.js'
import { silentLogger } from '../../../helpers/db.js'
import type { RequestRecord } from '../../../../src/main/store/request-record.js'

process.env.GATEWAY_SERVER = 'node'
await import('../websocket.test.js')

interface Backend { url: string, server: WebSocketServer, connections: number, upgrades: http.IncomingMessage[], sockets: WebSocket[] }

/** A `ws` echo backend; a path starting with /refuse answers the handshake 403 with a JSON body. */
async function startWsBackend (t: Test, host: string): Promise<Backend> {
  const http1 = http.createServer()
  const b: Backend = { url: '', server: new WebSocketServer({ noServer: true, perMessageDeflate: true, handleProtocols: p => p.has('chat.v2') ? 'chat.v2' : false }), connections: 0, upgrades: [], sockets: [] }
  http1.on('connection', () => { b.connections++ })
  http1.on('upgrade', (req, socket, head) => {
    b.upgrades.push(req)
    if (req.url?.startsWith('/refuse') === true) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: 22\r\nx-backend: yes\r\n\r\n{"why":"not on a Fri"}')
      return
    }
    b.server.handleUpgrade(req, socket, head, ws => {
      b.sockets.push(ws)
      ws.on('message', (data, isBinary) => { if (!ws.isPaused) ws.send(data, { binary: isBinary }) })
    })
  })
  await new Promise<void>(resolve => http1.listen(0, host, resolve))
  t.teardown(() => { for (const s of b.sockets) s.terminate(); http1.close(); http1.closeAllConnections() })
  b.url = `http://${host}:${(http1.address() as net.AddressInfo).port}`
  return b
}

function open (url: string, opts: WebSocket.ClientOptions = {}, protocols?: string[]): Promise<{ ws: WebSocket, messages: Array<string | Buffer>, closed: Promise<{ code: number, reason: string }> }> {
  return new Promise((resolve, reject) => {
    // No compression unless asked: byte counts and backpressure are about what crosses the wire.
    const ws = new WebSocket(url, protocols, { perMessageDeflate: false, ...opts })
    const messages: Array<string | Buffer> = []
    const closed = new Promise<{ code: number, reason: string }>(done => ws.on('close', (code, reason) => done({ code, reason: reason.toString() })))
    ws.on('message', (data, isBinary) => messages.push(isBinary ? data as Buffer : data.toString()))
    ws.once('open', () => resolve({ ws, messages, closed }))
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += c.toString() })
      res.on('end', () => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body })))
    })
    ws.once('error', reject)
  })
}
const until = async (ok: () => boolean): Promise<void> => { for (let i = 0; i < 800 && !ok(); i++) await new Promise(resolve => setTimeout(resolve, 25)) }

t.test('WebSocket relay on the node layer', async t => {
  const backend = await startWsBackend(t, '127.0.0.5')
  const records: RequestRecord[] = []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-ws-tls-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' })
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_SERVER: 'node', TLS_CERT: path.join(dir, 'cert.pem'), TLS_KEY: path.join(dir, 'key.pem'), TLS_PORT: '0' })
  const gateway = createGateway({ config, logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }), env: {}, observe: r => records.push(r) })
  const { port, tlsPort } = await gateway.listen()
  t.teardown(async () => { await gateway.close() })
  const open1 = collection({ upstream_url: backend.url, auth_required: false })
  const guarded = collection({ upstream_url: backend.url, auth_required: true })
  const down = collection({ upstream_url: 'http://127.0.0.6:9', auth_required: false })
  const echo = proxy(open1, { path: '/echo', websocket: true })
  const refused = proxy(open1, { path: '/refuse', target_path: '/refuse', websocket: true })
  gateway.setRoutes([open1, guarded, down], [echo, refused, proxy(guarded, { path: '/echo', websocket: true }), proxy(down, { path: '/echo', websocket: true })])
  const base = `ws://127.0.0.1:${port}`

  t.test("the client's handshake reaches the backend: compression and sub-protocol negotiated end to end", async t => {
    const c = await open(`${base}${open1.base_path}/echo`, { perMessageDeflate: true, headers: { 'x-user': 'ann' } }, ['chat.v2'])
    t.equal(c.ws.protocol, 'chat.v2', 'the sub-protocol the backend chose')
    t.match(c.ws.extensions, /permessage-deflate/, 'the compression the backend accepted')
    t.match(backend.upgrades.at(-1)!.headers, { 'x-user': 'ann', 'x-forwarded-for': '127.0.0.1' }, 'forwarded headers as for any call')
    t.ok(typeof backend.upgrades.at(-1)!.headers['x-request-id'] === 'string', 'with the request id')
    const big = 'y'.repeat(300_000)
    c.ws.send('hi')
    c.ws.send(big)
    await until(() => c.messages.length === 2)
    t.same(c.messages, ['hi', big])
    c.ws.close(4002, 'enough')
    t.same(await c.closed, { code: 4002, reason: 'enough' }, 'the close handshake passes through with its code')
  })

  t.test("a backend refusing the upgrade: the client gets the backend's answer", async t => {
    const err = await open(`${base}${open1.base_path}/refuse`).then(() => null, (e: { status?: number, headers?: Record<string, string>, body?: string }) => e)
    t.equal(err?.status, 403)
    t.equal(err?.body, '{"why":"not on a Fri"}')
    t.equal(err?.headers?.['x-backend'], 'yes')
    t.ok(typeof err?.headers?.['x-request-id'] === 'string')
    await until(() => records.some(r => r.proxy_id === refused.id))
    t.match(records.filter(r => r.proxy_id === refused.id), [{ status: 403 }], 'one record, with the backend\'s status')
  })

  t.test('a backend that cannot be reached: 502 in the gateway\'s error shape', async t => {
    const err = await open(`${base}${down.base_path}/echo`).then(() => null, (e: { status?: number, body?: string }) => e)
    t.equal(err?.status, 502)
    t.match(JSON.parse(err?.body ?? '{}'), { error: { code: 'bad_gateway' }, request_id: String })
  })

  t.test('access denied: 401 in the error shape, the backend never contacted', async t => {
    const before = backend.connections
    const err = await open(`${base}${guarded.base_path}/echo`).then(() => null, (e: { status?: number, body?: string }) => e)
    t.equal(err?.status, 401)
    t.match(JSON.parse(err?.body ?? '{}'), { error: { code: String }, request_id: String })
    t.equal(backend.connections, before, 'no connection to the backend')
  })

  t.test('a backend that stops reading holds the client back (bounded memory), then gets everything', async t => {
    const c = await open(`${base}${open1.base_path}/echo`)
    await until(() => backend.sockets.length > 0 && backend.sockets.at(-1)!.readyState === WebSocket.OPEN)
    const b = backend.sockets.at(-1)!
    b.pause()
    const chunk = Buffer.alloc(1024 * 1024, 3)
    for (let i = 0; i < 64; i++) c.ws.send(chunk)
    const stuck = async (): Promise<number> => { let last = -1; for (let i = 0; i < 40 && c.ws.bufferedAmount !== last; i++) { last = c.ws.bufferedAmount; await new Promise(resolve => setTimeout(resolve, 100)) } return last }
    const held = await stuck()
    t.ok(held > 32 * 1024 * 1024, `${Math.round(held / 1048576)} MiB of 64 still at the client: the gateway stopped reading it`)
    let got = 0
    b.removeAllListeners('message')
    b.on('message', (data: Buffer) => { got += data.length })
    b.resume()
    await until(() => got === 64 * 1024 * 1024)
    t.equal(got, 64 * 1024 * 1024, 'every byte arrived once the backend read again')
    c.ws.close()
    await c.closed
  })

  t.test('one request-log record per session: 101, bytes both ways, its duration', async t => {
    const n = records.filter(r => r.proxy_id === echo.id).length
    const c = await open(`${base}${open1.base_path}/echo`)
    c.ws.send('x'.repeat(1000))
    await until(() => c.messages.length === 1)
    await new Promise(resolve => setTimeout(resolve, 200))
    c.ws.close(1000)
    await c.closed
    await until(() => records.filter(r => r.proxy_id === echo.id).length > n)
    await new Promise(resolve => setTimeout(resolve, 200))
    const mine = records.filter(r => r.proxy_id === echo.id).slice(n)
    t.equal(mine.length, 1, 'one record')
    t.match(mine[0], { status: 101, method: 'GET' })
    t.ok(mine[0]!.bytes_in >= 1000 && mine[0]!.bytes_out >= 1000, `bytes in ${mine[0]!.bytes_in}, out ${mine[0]!.bytes_out}`)
    t.ok(mine[0]!.duration_ms >= 200, `the session's duration (${mine[0]!.duration_ms} ms)`)
  })

  t.test('over TLS_PORT (HTTP/1.1 by ALPN) the same relay', async t => {
    const c = await open(`wss://127.0.0.1:${tlsPort}${open1.base_path}/echo`, { rejectUnauthorized: false })
    c.ws.send('secure hello')
    await until(() => c.messages.length === 1)
    t.same(c.messages, ['secure hello'])
    c.ws.close(4003, 'bye')
    t.same(await c.closed, { code: 4003, reason: 'bye' })
  })
})
