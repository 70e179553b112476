/**
 * Request desync: a request whose framing is in doubt is followed, in the same
 * write, by a marker request. Whatever the gateway answers to the first, the
 * marker must never reach a backend: the connection is closed before anything
 * else on it is parsed.
 */
import net from 'node:net'
import t from 'tap'
import { collection, proxy, startBackend, startGateway } from '../../helpers/gateway.js'

const MARKER = 'GET /api/marker HTTP/1.1\r\nHost: x\r\n\r\n'

const head = (lines: string[]) => `POST /api/x HTTP/1.1\r\nHost: x\r\n${lines.map(l => l + '\r\n').join('')}\r\n`
export const CORPUS = {
  'two equal Content-Length': head(['Content-Length: 5', 'Content-Length: 5']) + 'hello',
  'two different Content-Length': head(['Content-Length: 5', 'Content-Length: 0']) + 'hello',
  'Content-Length list': head(['Content-Length: 5, 5']) + 'hello',
  'Content-Length with a sign': head(['Content-Length: +5']) + 'hello',
  'Content-Length in hex': head(['Content-Length: 0x5']) + 'hello',
  'Transfer-Encoding and Content-Length': head(['Content-Length: 5', 'Transfer-Encoding: chunked']) + '0\r\n\r\n',
  'Content-Length after Transfer-Encoding': head(['Transfer-Encoding: chunked', 'Content-Length: 5']) + '0\r\n\r\n',
  'Transfer-Encoding: xchunked': head(['Transfer-Encoding: xchunked']) + '0\r\n\r\n',
  'Transfer-Encoding: chunked, identity': head(['Transfer-Encoding: chunked, identity']) + '0\r\n\r\n',
  'Transfer-Encoding: identity, chunked': head(['Transfer-Encoding: identity, chunked']) + '0\r\n\r\n',
  'Transfer-Encoding: gzip, chunked': head(['Transfer-Encoding: gzip, chunked']) + '0\r\n\r\n',
  'Transfer-Encoding: chunked;foo=bar': head(['Transfer-Encoding: chunked;foo=bar']) + '0\r\n\r\n',
  'Transfer-Encoding: gzip': head(['Transfer-Encoding: gzip']) + 'hello',
  'two Transfer-Encoding: chunked': head(['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked']) + '0\r\n\r\n',
  'Transfer-Encoding: chunked then identity': head(['Transfer-Encoding: chunked', 'Transfer-Encoding: identity']) + '0\r\n\r\n',
  'Transfer-Encoding: CHUNKED': head(['Transfer-Encoding: CHUNKED']) + '0\r\n\r\n',
  'empty Transfer-Encoding': head(['Transfer-Encoding: ']) + '0\r\n\r\n',
  'bad chunk size': head(['Transfer-Encoding: chunked']) + 'zz\r\nhello\r\n0\r\n\r\n',
  'chunk longer than its size': head(['Transfer-Encoding: chunked']) + '2\r\nhello\r\n0\r\n\r\n',
  'two Host headers': head(['Host: internal.example', 'Content-Length: 5']) + 'hello',
  'two equal Host headers': head(['Host: x', 'Content-Length: 5']) + 'hello'
} satisfies Record<string, string>

/** Writes the bytes in one write; resolves with everything read until the server closes or goes quiet. */
async function exchange (port: number, raw: string, quietMs = 600): Promise<{ out: string, closed: boolean }> {
  return await new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1', () => s.write(raw))
    let out = ''
    s.on('data', d => { out += d.toString() })
    s.setTimeout(quietMs, () => { s.destroy(); resolve({ out, closed: false }) })
    s.on('close', () => resolve({ out, closed: true }))
    s.on('error', () => {})
  })
}

t.test('no request hides another: the marker after a refused request never reaches the backend', async t => {
  const backend = await startBackend(t)
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/', methods: ['GET', 'POST'] })])

  // The marker alone does reach the backend: the test can see it.
  const alone = await exchange(port, MARKER.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'))
  t.match(alone.out, /^HTTP\/1\.1 200/)
  t.ok(backend.seen.some(s => s.method === 'GET'), 'the marker alone reaches the backend')
  backend.seen.length = 0

  for (const [name, payload] of Object.entries(CORPUS)) {
    const before = backend.seen.length
    const { out, closed } = await exchange(port, payload + MARKER)
    await new Promise(resolve => setTimeout(resolve, 50))
    t.equal(backend.seen.length, before, `${name}: nothing reached the backend`)
    t.ok(closed, `${name}: the connection is closed`)
    t.notMatch(out, /HTTP\/1\.1 2\d\d/, `${name}: no success answer (${JSON.stringify(out.split('\r\n')[0])})`)
    t.equal(out.match(/HTTP\/1\.1 /g)?.length ?? 0, out === '' ? 0 : 1, `${name}: at most one answer`)
  }
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(backend.seen.map(s => `${s.method} ${s.url}`), [], 'nothing reached the backend, the marker least of all')
})

t.test('a refusal sent alone still gets its 400 before the close', async t => {
  const backend = await startBackend(t)
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/', methods: ['GET', 'POST'] })])
  const { out, closed } = await exchange(port, CORPUS['two equal Content-Length'])
  t.match(out, /^HTTP\/1\.1 400/)
  t.match(out, /"code":"bad_request"/)
  t.ok(closed, 'closed after the answer')
})
