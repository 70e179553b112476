/**
 * The event stream's bytes on the wire: each frame one well-formed HTTP/1.1 chunk (its size
 * counted in bytes), unchunked for HTTP/1.0, behind a pipelined answer, and every event in order
 * for a reader that falls behind and catches up. Read by a raw socket (strict framing) and by
 * fetch (undici's parser).
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import net from 'node:net'
import { pino } from 'pino'
import { createEventHub, type EventHub } from '../../../src/main/events/hub.js'
import { handleEventStream } from '../../../src/main/events/sse.js'
import { eventually } from '../cache/shared.js'
import { openStream } from '../../helpers/sse.js'
import { proxyEvent } from './helpers.js'

const logger = pino({ level: 'silent' })

async function serve (t: Test, opts: { subscriberBuffer?: number } = {}): Promise<{ hub: EventHub, port: number }> {
  const hub = createEventHub({ config: { CACHE_TYPE: 'memory' }, logger, subscriberBuffer: opts.subscriberBuffer })
  const server = http.createServer((req, res) => {
    // /first answers 200 ms later: a stream pipelined behind it waits that long for its socket.
    if (req.url === '/first') { setTimeout(() => { res.end('first') }, 200); return }
    void handleEventStream(req, res, hub, { pingIntervalMs: 60_000 })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    await hub.close()
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { hub, port: (server.address() as net.AddressInfo).port }
}

/** A raw connection that keeps every byte it receives. */
function connect (t: Test, port: number, request: string): { socket: net.Socket, bytes: () => Buffer, closed: () => boolean } {
  const socket = net.connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  let closed = false
  socket.on('data', c => chunks.push(c))
  socket.on('close', () => { closed = true })
  socket.on('error', () => {})
  socket.write(request)
  t.teardown(() => { socket.destroy() })
  return { socket, bytes: () => Buffer.concat(chunks), closed: () => closed }
}

/** Splits an answer's bytes after the head: [head, body]; undefined until the head is complete. */
function splitHead (b: Buffer): [string, Buffer] | undefined {
  const end = b.indexOf('\r\n\r\n')
  return end < 0 ? undefined : [b.subarray(0, end).toString('latin1'), b.subarray(end + 4)]
}

/** Reads chunked coding strictly: every size line, exactly that many bytes, then CRLF. */
function chunks (body: Buffer): { chunks: string[], last: boolean, rest: number } {
  const out: string[] = []
  let at = 0
  for (;;) {
    const eol = body.indexOf('\r\n', at)
    if (eol < 0) return { chunks: out, last: false, rest: body.length - at }
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16)
    if (!/^[0-9a-f]+$/.test(body.subarray(at, eol).toString('latin1'))) throw new Error(`bad chunk size line at ${at}`)
    if (body.length < eol + 2 + size + 2) return { chunks: out, last: false, rest: body.length - at }
    if (body.subarray(eol + 2 + size, eol + 4 + size).toString('latin1') !== '\r\n') throw new Error(`chunk at ${at} is not ${size} bytes`)
    if (size === 0) return { chunks: out, last: true, rest: body.length - (eol + 4) }
    out.push(body.subarray(eol + 2, eol + 2 + size).toString('utf8'))
    at = eol + 4 + size
  }
}

t.test('HTTP/1.1: each frame is one chunk of its size in bytes; the stream ends with the last chunk', async t => {
  const { hub, port } = await serve(t)
  const raw = connect(t, port, 'GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n')
  const viaFetch = await openStream(t, `http://127.0.0.1:${port}/api/v1/events/stream`)
  t.ok(await eventually(() => hub.subscriberCount === 2))
  await viaFetch.r.next()
  // Multi-byte characters: a chunk's size counts bytes, not characters.
  hub.publish({ ...proxyEvent(1), actor_sub: 'zoë ☃ 😀' })
  hub.publish(proxyEvent(2))
  const byFetch = await viaFetch.r.next()
  t.match(JSON.parse(byFetch!.data[0]!), { proxy_id: 'p1', actor_sub: 'zoë ☃ 😀' }, 'fetch parses the frame')
  t.match(JSON.parse((await viaFetch.r.next())!.data[0]!), { proxy_id: 'p2' })

  t.ok(await eventually(() => { const s = splitHead(raw.bytes()); return s !== undefined && chunks(s[1]).chunks.length === 3 }))
  const [head, body] = splitHead(raw.bytes())!
  t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  t.match(head.toLowerCase(), /\r\ntransfer-encoding: chunked(\r\n|$)/)
  const got = chunks(body)
  t.equal(got.rest, 0, 'nothing beyond whole chunks')
  t.match(got.chunks[0], /^id: [^\n]+\n\n$/, 'the starting position, one chunk')
  t.match(got.chunks[1], /^id: [^\n]+\ndata: \{[^\n]*"actor_sub":"zoë ☃ 😀"[^\n]*\}\n\n$/, 'an event, one chunk, its multi-byte text intact')
  t.match(got.chunks[2], /^id: [^\n]+\ndata: \{[^\n]*"proxy_id":"p2"[^\n]*\}\n\n$/)

  await hub.close()
  t.ok(await eventually(() => chunks(splitHead(raw.bytes())![1]).last), 'the hub closing ends the body with the last chunk')
  t.equal(chunks(splitHead(raw.bytes())![1]).rest, 0)
  t.notOk(raw.closed(), 'the connection stays open for the next request')
})

t.test('HTTP/1.0: frames without chunking; the stream ends with the connection', async t => {
  const { hub, port } = await serve(t)
  const raw = connect(t, port, 'GET /api/v1/events/stream HTTP/1.0\r\nHost: x\r\n\r\n')
  t.ok(await eventually(() => hub.subscriberCount === 1))
  hub.publish(proxyEvent(1))
  t.ok(await eventually(() => (splitHead(raw.bytes())?.[1].toString('utf8') ?? '').includes('"proxy_id":"p1"')))
  await hub.close()
  t.ok(await eventually(() => raw.closed()))
  const [head, body] = splitHead(raw.bytes())!
  t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
  t.notMatch(head.toLowerCase(), /transfer-encoding/)
  t.match(body.toString('utf8'), /^id: [^\n]+\n\nid: [^\n]+\ndata: \{[^\n]*"proxy_id":"p1"[^\n]*\}\n\n$/, 'the bare frames, nothing else')
})

t.test('a stream pipelined behind another answer starts once that answer is out', async t => {
  const { hub, port } = await serve(t)
  const raw = connect(t, port, 'GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n')
  t.ok(await eventually(() => hub.subscriberCount === 1))
  hub.publish(proxyEvent(1))
  t.ok(await eventually(() => raw.bytes().includes('"proxy_id":"p1"')))
  hub.publish(proxyEvent(2))
  t.ok(await eventually(() => raw.bytes().includes('"proxy_id":"p2"')))
  const text = raw.bytes().toString('utf8')
  const second = text.indexOf('HTTP/1.1 200 OK', 1)
  t.match(text.slice(0, second), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nfirst$/, 'the first answer, whole, first')
  const [, body] = splitHead(Buffer.from(text.slice(second)))!
  const got = chunks(body)
  t.equal(got.chunks.length, 3, 'then the stream: its position and both events, each a chunk')
  t.match(got.chunks[1], /"proxy_id":"p1"/)
  t.match(got.chunks[2], /"proxy_id":"p2"/)
})

t.test('a reader that falls behind (socket buffers full) and catches up gets every event once, in order', async t => {
  const { hub, port } = await serve(t, { subscriberBuffer: 1024 })
  const raw = connect(t, port, 'GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n')
  raw.socket.pause()
  t.ok(await eventually(() => hub.subscriberCount === 1))
  // 600 events of 16 KB (about 10 MB) pass what the kernel buffers on loopback: the rest waits
  // in the subscription (under its bound) until the socket drains.
  const big = 'x'.repeat(16_000)
  const n = 600
  for (let i = 1; i <= n; i++) hub.publish({ resource_kind: 'proxy', proxy_id: `p${i}`, collection_id: big, operation: 'updated' })
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal(hub.subscriberCount, 1, 'still subscribed: behind, but within the bound')
  raw.socket.resume()
  const seen = () => { const s = splitHead(raw.bytes()); return s === undefined ? [] : chunks(s[1]).chunks }
  t.ok(await eventually(() => seen().length === n + 1), 'every event arrived')
  const ids = seen().slice(1).map(c => /"proxy_id":"(p\d+)"/.exec(c)?.[1])
  t.same(ids, Array.from({ length: n }, (_, i) => `p${i + 1}`), 'once each, in order, each its own chunk')
})
