/**
 * Request syntax the HTTP layer parses before any gateway code runs, as docs/gateway.md ("What each
 * layer decides by itself") documents it: chunk extensions (RFC 9112 §7.1.1), trailers and the
 * number of header fields. uWebSockets.js (v20) misreads a chunk extension as digits of the chunk
 * size, takes no trailer and parses at most 98 header field lines; the node layer
 * (GATEWAY_SERVER=node) handles all three.
 */
import net from 'node:net'
import t from 'tap'
import { collection, proxy, startBackend, startGateway } from '../../helpers/gateway.js'

/** Writes `raw`; resolves with what came back and whether the server closed within `ms`. */
async function exchange (port: number, raw: string, ms: number, untilAnswer = false): Promise<{ out: string, closed: boolean, after: number }> {
  const started = Date.now()
  return await new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1', () => s.write(raw))
    let out = ''
    const done = (closed: boolean) => { s.destroy(); resolve({ out, closed, after: Date.now() - started }) }
    s.on('data', d => { out += d.toString(); if (untilAnswer && /\r\n\r\n[^]*\}(\r\n0\r\n\r\n)?$/.test(out)) done(false) })
    s.setTimeout(ms, () => done(false))
    s.on('close', () => done(true))
    s.on('error', () => {})
  })
}

const fields = (n: number, width = 1) => Array.from({ length: n }, (_, i) => `x-h${i}: ${'v'.repeat(width)}\r\n`).join('')
const CHUNKED_WITH_EXTENSION = 'POST /api/upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\n\r\n'

for (const server of ['uws', 'node'] as const) {
  t.test(`${server}: a chunk extension`, async t => {
    const backend = await startBackend(t)
    const { gateway, port } = await startGateway(t, {}, { GATEWAY_SERVER: server })
    const c = collection({ base_path: '/api', upstream_url: backend.url })
    gateway.setRoutes([c], [proxy(c, { path: '/upload', target_path: '/upload', methods: ['POST'], timeout_ms: 1000 })])
    const r = await exchange(port, CHUNKED_WITH_EXTENSION, 60_000, true)
    if (server === 'uws') {
      t.match(r.out, /^HTTP\/1\.1 504\r\n[^]*"code":"gateway_timeout"/, 'uWS reads ";a=b" as size digits (0x5badb): the body never completes, 504 at the route timeout')
      t.equal(backend.seen.length, 0, 'no complete request reached the backend (checked before the next request)')
    } else {
      t.match(r.out, /^HTTP\/1\.1 200 /, 'node: the extension is ignored, as RFC 9112 allows')
      t.equal(backend.seen.at(-1)?.body, 'hello', 'and the body arrives as sent')
    }
    const trailer = await exchange(port, CHUNKED_WITH_EXTENSION.replace('5;a=b', '5').replace('0\r\n\r\n', '0\r\nX-Sum: 1\r\n\r\n'), 60_000, server === 'node')
    if (server === 'uws') {
      t.match(trailer.out, /HTTP\/1\.1 505 HTTP Version Not Supported\r\n/, 'a trailer field: uWS reads it as the next request line (505)')
      t.ok(trailer.closed, 'and closes the connection')
    } else t.match(trailer.out, /^HTTP\/1\.1 200 [^]*"body":"hello"/, 'node: a trailer field is ignored')
    if (server === 'uws') {
      // An extension with a character past uWS's digit range is refused by uWS itself.
      const refused = await exchange(port, CHUNKED_WITH_EXTENSION.replace('5;a=b', '5;name=x'), 60_000)
      t.match(refused.out, /^HTTP\/1\.1 400 Bad Request\r\n[^]*uWebSockets/, '"5;name=x": uWS\'s own 400 page')
      t.ok(refused.closed, 'then the close')
    }
  })

  t.test(`${server}: header field count`, async t => {
    const backend = await startBackend(t)
    const { gateway, port } = await startGateway(t, {}, { GATEWAY_SERVER: server })
    const c = collection({ base_path: '/api', upstream_url: backend.url })
    gateway.setRoutes([c], [proxy(c, { path: '/x', target_path: '/x' })])
    const head = (n: number, width = 1) => `GET /api/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n${fields(n - 2, width)}\r\n`
    t.match((await exchange(port, head(98), 30_000)).out, /^HTTP\/1\.1 200 /, '98 header field lines are served')
    const small = await exchange(port, head(99), 60_000)
    // Over 16 KiB: past the limit the service sets (16384) and uWS's own default (4096) alike.
    const large = await exchange(port, head(99, 170), 60_000)
    if (server === 'uws') {
      t.equal(small.out, '', '99 field lines in a head under UWS_HTTP_MAX_HEADERS_SIZE (1 KB): no answer at all')
      t.ok(small.closed, 'the connection is closed by the HTTP layer\'s idle timeout')
      t.ok(small.after >= 7000, `after about 10 s (${small.after} ms)`)
      t.match(large.out, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*uWebSockets/, 'a head over it (17.5 KB): uWS\'s own 431 page')
    } else {
      t.match(small.out, /^HTTP\/1\.1 431 [^]*"code":"request_header_fields_too_large"/, 'node: 431 with the gateway\'s error shape')
      t.match(large.out, /^HTTP\/1\.1 431 /, 'and over 16 KiB too')
    }
    t.equal(backend.seen.length, 1, 'only the request with 98 field lines reached the backend')
  })
}
