/**
 * WebSocket proxying through the gateway to a real uWebSockets.js backend on 127.0.0.2: echo both
 * ways, the same access checks as any call, a backend refusing the handshake, a backend closing
 * mid-stream, the client closing, and the request log's record with the session's duration.
 */
import t, { type Test } from 'tap'
import { createRequire } from 'node:module'
import WebSocket from 'ws'
import { balancedCollection, collection, proxy, startGateway } from '../../helpers/gateway.js'
import { startBackend } from '../../helpers/backends.js'
import type { RequestRecord } from '../../../src/main/store/request-record.js'

const uWS = createRequire(import.meta.url)('uWebSockets.js')

interface WsBackend { url: string, closes: Array<{ code: number, reason: string }>, opened: number, headers: Array<Record<string, string>>, flood?: () => boolean, heldBack: number }

/** A uWS WebSocket backend: echoes; "close-me" makes it close with 4001; "cut-me" cuts the TCP connection after two messages. */
async function startWsBackend (t: Test, host: string): Promise<WsBackend> {
  const b: WsBackend = { url: '', closes: [], opened: 0, headers: [], heldBack: 0 }
  const app = uWS.App()
  app.ws('/*', {
    maxPayloadLength: 1024 * 1024,
    maxBackpressure: 256 * 1024 * 1024,
    upgrade: (res: any, req: any, context: any) => {
      const headers: Record<string, string> = {}
      req.forEach((k: string, v: string) => { headers[k] = v })
      b.headers.push({ ...headers, url: req.getUrl(), query: req.getQuery() })
      if (req.getUrl().startsWith('/refuse')) { res.writeStatus('403 Forbidden').writeHeader('content-type', 'application/json').end('{"why":"closed room"}'); return }
      res.upgrade({}, headers['sec-websocket-key'], headers['sec-websocket-protocol'] ?? '', headers['sec-websocket-extensions'] ?? '', context)
    },
    open: () => { b.opened++ },
    message: (ws: any, message: ArrayBuffer, isBinary: boolean) => {
      const text = Buffer.from(message).toString()
      if (!isBinary && text === 'close-me') { ws.end(4001, 'bye from backend'); return }
      if (!isBinary && text === 'flood') {
        // 96 messages of 1 MiB, sent as fast as uWS takes them: more than uWS would buffer for one client (64 MiB).
        const chunk = Buffer.alloc(1024 * 1024, 7)
        let sent = 0
        const more = () => { while (sent < 96) { chunk[0] = sent % 256; sent++; ws.send(chunk, true); if (ws.getBufferedAmount() > 4 * 1024 * 1024) { b.heldBack++; return false } } return true }
        b.flood = more
        more()
        return
      }
      if (!isBinary && text === 'cut-me') { ws.send('one'); ws.send('two'); setTimeout(() => ws.close(), 50); return }
      ws.send(message, isBinary)
    },
    drain: () => { b.flood?.() },
    close: (ws: any, code: number, reason: ArrayBuffer) => { b.closes.push({ code, reason: Buffer.from(reason).toString() }) }
  })
  const port = await new Promise<number>((resolve, reject) => app.listen(host, 0, (ls: any) => ls ? resolve(uWS.us_socket_local_port(ls)) : reject(new Error('listen'))))
  t.teardown(() => app.close())
  b.url = `http://${host}:${port}`
  return b
}

function open (url: string, opts: Record<string, unknown> = {}): Promise<{ ws: WebSocket, messages: Array<string | Buffer>, closed: Promise<{ code: number, reason: string }> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts)
    const messages: Array<string | Buffer> = []
    const closed = new Promise<{ code: number, reason: string }>(done => ws.on('close', (code, reason) => done({ code, reason: reason.toString() })))
    ws.on('message', (data, isBinary) => messages.push(isBinary ? data as Buffer : data.toString()))
    ws.once('open', () => resolve({ ws, messages, closed }))
    ws.once('unexpected-response', (req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += c.toString() })
      res.on('end', () => reject(Object.assign(new Error(`status ${res.statusCode}`), { status: res.statusCode, body })))
    })
    ws.once('error', reject)
  })
}
const until = async (ok: () => boolean) => { for (let i = 0; i < 400 && !ok(); i++) await new Promise(resolve => setTimeout(resolve, 25)) }

t.test('WebSocket relay', async t => {
  const backend = await startWsBackend(t, '127.0.0.2')
  const records: RequestRecord[] = []
  const { gateway, port } = await startGateway(t, {}, {}, { observe: r => records.push(r) })
  const open1 = collection({ upstream_url: backend.url, auth_required: false })
  const guarded = collection({ upstream_url: backend.url, auth_required: true })
  const balanced = balancedCollection([{ url: backend.url }, { url: backend.url.replace('127.0.0.2', '127.0.0.3') }], { health_checks: { passive: null } }, { auth_required: false })
  const chat = proxy(open1, { path: '/chat/{room}', target_path: '/rooms/{room}', websocket: true })
  const refusing = proxy(open1, { path: '/chat/refuse', target_path: '/refuse', websocket: true })
  const http = await startBackend(t, '127.0.0.4', 'http')
  const plain = collection({ upstream_url: http.url, auth_required: false })
  gateway.setRoutes([open1, guarded, balanced, plain], [chat, refusing, proxy(guarded, { path: '/chat', websocket: true }), proxy(balanced, { path: '/room', websocket: true }), proxy(plain, { path: '/plain' })])
  const base = `ws://127.0.0.1:${port}`

  t.test('messages both ways, text and binary', async t => {
    const c = await open(`${base}${open1.base_path}/chat/lobby?since=5`, { headers: { 'x-user': 'ann' } })
    c.ws.send('hello')
    c.ws.send(Buffer.from([0, 1, 2, 255]))
    const big = 'x'.repeat(200_000)
    c.ws.send(big)
    await until(() => c.messages.length === 3)
    t.same(c.messages.slice(0, 2), ['hello', Buffer.from([0, 1, 2, 255])])
    t.equal(c.messages[2], big, 'a 200 KB message arrives whole')
    const h = backend.headers.at(-1)!
    t.match(h, { url: '/rooms/lobby', query: 'since=5', 'x-user': 'ann', 'x-forwarded-for': '127.0.0.1' }, 'the target path, query and headers as for any call')
    c.ws.close(4000, 'done here')
    t.same(await c.closed, { code: 4000, reason: 'done here' })
    await until(() => backend.closes.length > 0)
    t.same(backend.closes.at(-1), { code: 4000, reason: 'done here' }, "the client's close reaches the backend")
    await until(() => records.some(r => r.status === 101))
    const rec = records.find(r => r.status === 101)!
    t.match(rec, { proxy_id: chat.id, method: 'GET', status: 101 }, 'one request-log record for the session')
    t.ok(rec.bytes_in >= 200_000 && rec.bytes_out >= 200_000, 'with the bytes relayed')
  })

  t.test('the backend closing mid-stream closes the client, with its code', async t => {
    const c = await open(`${base}${open1.base_path}/chat/a`)
    c.ws.send('close-me')
    t.same(await c.closed, { code: 4001, reason: 'bye from backend' })
    const d = await open(`${base}${open1.base_path}/chat/b`)
    d.ws.send('cut-me')
    const closed = await d.closed
    t.same(d.messages, ['one', 'two'], 'what the backend sent first arrives')
    t.equal(closed.code, 1011, 'a cut backend connection closes the client with 1011')
  })

  t.test('backpressure: a client that stops reading stops the backend, and then gets every message', async t => {
    const c = await open(`${base}${open1.base_path}/chat/flood`)
    c.ws.pause()
    c.ws.send('flood')
    await new Promise(resolve => setTimeout(resolve, 2000))
    t.ok(c.messages.length < 96, `${c.messages.length} messages while paused`)
    t.ok(backend.heldBack > 0, 'the backend itself had to wait: the gateway stopped reading it')
    c.ws.resume()
    for (let i = 0; i < 400 && c.messages.length < 96; i++) await new Promise(resolve => setTimeout(resolve, 25))
    t.equal(c.messages.length, 96, 'all 96 MiB arrived: the gateway held the backend back instead of buffering past its limit')
    t.ok((c.messages as Buffer[]).every((m, i) => m.length === 1024 * 1024 && m[0] === i % 256), 'in order, whole')
    c.ws.close()
    await c.closed
  })

  t.test('the same access checks: no credentials, no upgrade', async t => {
    const err = await open(`${base}${guarded.base_path}/chat`).then(() => null, (e: { status?: number }) => e)
    t.equal(err?.status, 401)
  })

  t.test("a backend refusing the upgrade: the client gets the backend's answer", async t => {
    const err = await open(`${base}${open1.base_path}/chat/refuse`).then(() => null, (e: { status?: number, body?: string }) => e)
    t.equal(err?.status, 403)
    t.equal(err?.body, '{"why":"closed room"}')
  })

  t.test('a balanced upstream: a handshake that cannot reach a target goes to another', async t => {
    for (let i = 0; i < 4; i++) {
      const c = await open(`${base}${balanced.base_path}/room`)
      c.ws.send('ping?')
      await until(() => c.messages.length === 1)
      t.same(c.messages, ['ping?'])
      c.ws.close()
    }
  })

  t.test('a proxy without websocket: the upgrade is not relayed', async t => {
    const err = await open(`${base}${plain.base_path}/plain`).then(() => null, (e: { status?: number }) => e)
    t.equal(err?.status, 200, 'forwarded as a plain request')
    t.equal(http.seen.at(-1)?.headers.upgrade, undefined, 'without the Upgrade header (hop-by-hop)')
  })
})
