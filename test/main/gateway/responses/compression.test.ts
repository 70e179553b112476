import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import http from 'node:http'
import zlib from 'node:zlib'
import t, { type Test } from 'tap'
import { collection, proxy, startBackend, startGateway } from '../../../helpers/gateway.js'
import { launchBrowser, type PageDocument } from '../../../helpers/browser.js'

// Read inside page.evaluate, in the browser.
declare const document: PageDocument

/** A GET without any decoding: status, headers and the raw bytes. */
async function raw (url: string, headers: Record<string, string> = {}): Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    // agent: false: uWS closes after a `connection: close` request without saying so in its answer.
    http.get(url, { agent: false, headers: { connection: 'close', ...headers } }, res => {
      const chunks: Buffer[] = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
}
const decode = (r: { headers: http.IncomingHttpHeaders, body: Buffer }): string =>
  (r.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(r.body) : r.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(r.body) : r.body).toString()

const items = JSON.stringify({ items: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })) })
const big = JSON.stringify({ items: Array.from({ length: 30_000 }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 3 })) })

async function setup (t: Test, conf: Record<string, string> = {}) {
  const backend = await startBackend(t, (req, res) => {
    const u = req.url!
    if (u === '/small') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    else if (u === '/png') res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(5000, 1))
    else if (u === '/encoded') res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync(items))
    else if (u === '/big') { res.writeHead(200, { 'content-type': 'application/json' }); res.write(big.slice(0, 1000)); res.end(big.slice(1000)) }
    else if (u === '/etag') res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"' }).end(items)
    else res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(items.length) }).end(items)
  })
  const gw = await startGateway(t, {}, conf)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gw.gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*' }), proxy(c, { path: '/off/*', target_path: '/*', compression: false })])
  return { ...gw, backend }
}

t.test('q-values choose gzip, Brotli or nothing', async t => {
  const { url } = await setup(t)
  const enc = async (accept: string) => (await raw(`${url}/api/list`, { 'accept-encoding': accept })).headers['content-encoding'] ?? 'identity'
  t.equal(await enc('gzip'), 'gzip')
  t.equal(await enc('gzip, deflate, br'), 'br', 'Brotli on a tie')
  t.equal(await enc('gzip;q=1, br;q=0.5'), 'gzip', 'the higher q wins')
  t.equal(await enc('gzip;q=0'), 'identity', 'gzip;q=0 gets none')
  t.equal(await enc('br;q=0, gzip'), 'gzip')
  t.equal(await enc('*'), 'br')
  t.equal(await enc('*;q=0, identity'), 'identity')
  t.equal(await enc('identity'), 'identity')
  t.equal(await enc('deflate'), 'identity', 'deflate is not offered')
  const none = await raw(`${url}/api/list`)
  t.equal(none.headers['content-encoding'], undefined, 'no Accept-Encoding: identity')
  t.equal(none.headers.vary, 'Accept-Encoding', 'which still says it varies')
  t.equal(none.body.toString(), items)
  for (const accept of ['gzip', 'br']) {
    const r = await raw(`${url}/api/list`, { 'accept-encoding': accept })
    t.equal(decode(r), items, `${accept} decodes to the backend's bytes`)
    t.equal(Number(r.headers['content-length']), r.body.length, 'Content-Length is the encoded length')
    t.ok(r.body.length < items.length / 3)
    t.equal(r.headers.vary, 'Accept-Encoding')
  }
})

t.test('what is not compressed', async t => {
  const { url } = await setup(t)
  const get = async (path: string) => await raw(`${url}/api${path}`, { 'accept-encoding': 'gzip, br' })
  let r = await get('/small')
  t.equal(r.headers['content-encoding'], undefined, 'below COMPRESSION_MIN_BYTES')
  t.equal(r.body.toString(), '{"ok":true}')
  r = await get('/png')
  t.equal(r.headers['content-encoding'], undefined, 'not a compressible type')
  t.equal(r.body.length, 5000)
  r = await get('/encoded')
  t.equal(r.headers['content-encoding'], 'gzip', 'an encoded answer passes as it is')
  t.equal(zlib.gunzipSync(r.body).toString(), items, 'encoded once, not twice')
  r = await get('/off/list')
  t.equal(r.headers['content-encoding'], undefined, 'the proxy turned it off')
  t.equal(r.headers.vary, undefined)
  r = await get('/etag')
  t.equal(r.headers.etag, 'W/"v1"', 'a compressed answer weakens the ETag')
  r = await get('/big')
  t.equal(r.headers['content-encoding'], 'br', 'a 1.6 MB answer of unannounced length is compressed as it comes')
  t.equal(r.headers['transfer-encoding'], 'chunked')
  t.equal(decode(r), big)
  const head = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.request(`${url}/api/list`, { agent: false, method: 'HEAD', headers: { 'accept-encoding': 'gzip', connection: 'close' } }, res => { res.resume(); resolve(res) }).on('error', reject).end()
  })
  t.equal(head.statusCode, 200)
})

t.test('COMPRESSION=off', async t => {
  const { url } = await setup(t, { COMPRESSION: 'off' })
  const r = await raw(`${url}/api/list`, { 'accept-encoding': 'gzip, br' })
  t.equal(r.headers['content-encoding'], undefined)
  t.equal(r.headers.vary, undefined)
  t.equal(r.body.toString(), items)
})

t.test('real clients decode it: node fetch, curl --compressed, Chromium', async t => {
  const { url } = await setup(t)
  const res = await fetch(`${url}/api/list`, { headers: { connection: 'close' } })
  t.ok(['gzip', 'br'].includes(res.headers.get('content-encoding') ?? ''), `fetch got ${res.headers.get('content-encoding')}`)
  t.same(await res.json(), JSON.parse(items), 'node fetch decodes it')

  // Asynchronously: the gateway runs in this process.
  const out = (await promisify(execFile)('curl', ['-s', '--compressed', '-D', '-', `${url}/api/list`], { encoding: 'utf8' })).stdout
  const [head, body] = out.split('\r\n\r\n')
  t.match(head, /content-encoding: (gzip|br)/i, 'curl asked for and got an encoding')
  t.equal(body, items, 'curl --compressed decodes it')

  const browser = await launchBrowser(t)
  const page = await browser.newPage()
  const answer = await page.goto(`${url}/api/list`)
  t.match((await answer!.allHeaders())['content-encoding'], /^(br|gzip)$/, 'Chromium asked for and got an encoding')
  t.same(JSON.parse(await page.evaluate(() => document.body.innerText)), JSON.parse(items), 'Chromium decodes it')
})

t.test('a streaming proxy\'s Server-Sent Events are neither compressed nor delayed', async t => {
  let finish: () => void = () => {}
  const backend = await startBackend(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write(`data: ${'x'.repeat(3000)}\n\n`)
    finish = () => res.end('data: bye\n\n')
  })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/sse', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/events', streaming: true }), proxy(c, { path: '/plain' })])
  for (const path of ['/events', '/plain']) {
    const first = await new Promise<{ headers: http.IncomingHttpHeaders, chunk: string, res: http.IncomingMessage }>((resolve, reject) => {
      http.get(`${url}/sse${path}`, { agent: false, headers: { 'accept-encoding': 'gzip, br', connection: 'close' } }, res => {
        res.once('data', (d: Buffer) => resolve({ headers: res.headers, chunk: d.toString(), res }))
      }).on('error', reject)
    })
    t.equal(first.headers['content-encoding'], undefined, `${path}: not compressed`)
    t.match(first.chunk, /^data: x{3000}/, `${path}: the first event arrives while the backend is still sending`)
    const rest = new Promise<string>(resolve => { let s = ''; first.res.on('data', d => { s += String(d) }); first.res.on('end', () => resolve(s)) })
    finish()
    t.match(await rest, /data: bye/)
  }
})
