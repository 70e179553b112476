import t from 'tap'
import { collection, proxy, rawRequest, startBackend, startGateway } from '../../helpers/gateway.js'

const get = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { connection: 'close', ...(init.headers as Record<string, string> ?? {}) } })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

t.test('routes, rewrites and forwards headers', async t => {
  const backend = await startBackend(t)
  const { gateway, url } = await startGateway(t, { TEAM_TOKEN: 'from-env' })
  const c = collection({
    base_path: '/api', upstream_url: `${backend.url}/base`,
    headers: [{ name: 'X-Team', value: 'payments' }, { name: 'X-Token', env: 'TEAM_TOKEN' }, { name: 'X-Missing', env: 'NOT_SET' }, { name: 'X-Both', value: 'collection' }]
  })
  const nested = collection({ base_path: '/api/v2', upstream_url: backend.url })
  gateway.setRoutes([c, nested], [
    proxy(c, { path: '/users/{id}', target_path: '/people/{id}', headers: [{ name: 'X-Both', value: 'proxy' }] }),
    proxy(c, { path: '/users/me', target_path: '/self' }),
    proxy(c, { path: '/files/*', target_path: '/storage/*', methods: ['GET', 'PUT'] }),
    proxy(c, { path: '/items', target_path: '/items', methods: ['POST'] }),
    proxy(nested, { path: '/ping', target_path: '/pong' })
  ])

  let r = await get(`${url}/api/users/42?x=1&y=%20z&x=2`, { headers: { 'x-request-id': 'req-abc', authorization: 'Bearer secret', 'x-client-id': 'c', 'x-profile-id': 'p', 'x-custom': 'kept', 'x-forwarded-for': '10.1.1.1' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('x-backend'), 'yes', 'backend headers come back')
  t.equal(r.headers.get('x-request-id'), 'req-abc')
  let seen = backend.seen.at(-1)!
  t.equal(seen.url, '/base/people/42?x=1&y=%20z&x=2', 'target path with params, query verbatim')
  t.equal(seen.headers['x-team'], 'payments')
  t.equal(seen.headers['x-token'], 'from-env', 'environment references resolved')
  t.notOk('x-missing' in seen.headers)
  t.equal(seen.headers['x-both'], 'proxy', 'proxy headers win over collection headers')
  t.equal(seen.headers['x-custom'], 'kept')
  t.notOk('authorization' in seen.headers, 'gateway auth headers are not forwarded')
  t.notOk('x-client-id' in seen.headers)
  t.notOk('x-profile-id' in seen.headers)
  t.equal(seen.headers['x-request-id'], 'req-abc')
  t.equal(seen.headers['x-forwarded-for'], '10.1.1.1, 127.0.0.1')
  t.equal(seen.headers['x-forwarded-proto'], 'http')
  t.match(seen.headers['x-forwarded-host'], /^127\.0\.0\.1:\d+$/)
  t.match(seen.headers.host, /^127\.0\.0\.1:\d+$/)

  r = await get(`${url}/api/users/me`)
  t.equal(backend.seen.at(-1)!.url, '/base/self', 'static segments beat parameters')
  t.match(r.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'a request id is generated')
  await get(`${url}/api/files/a/b/c.txt?v=1`)
  t.equal(backend.seen.at(-1)!.url, '/base/storage/a/b/c.txt?v=1', 'wildcard tail appended')
  await get(`${url}/api/v2/ping`)
  t.equal(backend.seen.at(-1)!.url, '/pong', 'longest base path wins')

  r = await get(`${url}/api/items`, { method: 'POST', body: JSON.stringify({ a: 1 }), headers: { 'content-type': 'application/json' } })
  seen = backend.seen.at(-1)!
  t.equal(seen.method, 'POST')
  t.equal(seen.body, '{"a":1}')
  t.equal(seen.headers['content-type'], 'application/json')

  r = await get(`${url}/api/items`)
  t.equal(r.status, 405)
  t.equal(r.headers.get('allow'), 'POST')
  const body = JSON.parse(r.text)
  t.equal(body.error.code, 'method_not_allowed')
  t.type(body.request_id, 'string')
  r = await get(`${url}/api/nothing`)
  t.equal(r.status, 404)
  t.equal(JSON.parse(r.text).error.code, 'not_found')
  r = await get(`${url}/elsewhere`)
  t.equal(r.status, 404)
})

t.test('path traversal never escapes the target prefix', async t => {
  const backend = await startBackend(t)
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/files/*', target_path: '/public/*' })])
  for (const p of ['/api/files/../admin', '/api/files/%2e%2e/admin', '/api/files/a%2f..%2fadmin', '/api/files/%2E%2E%2Fsecret', '/api/files/./x']) {
    const out = await rawRequest(port, `GET ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    t.match(out, /^HTTP\/1\.1 400/, p)
  }
  t.equal(backend.seen.length, 0, 'nothing reached the backend')
})

t.test('request smuggling attempts are refused with 400', async t => {
  const backend = await startBackend(t)
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/x', target_path: '/x', methods: ['POST'] })])
  const attempts = [
    'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc',
    'POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 10\r\n\r\nabc',
    'POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc'
  ]
  for (const a of attempts) t.match(await rawRequest(port, a), /^HTTP\/1\.1 400/, JSON.stringify(a.split('\r\n').slice(2, 4)))
  t.equal(backend.seen.length, 0)
  const ok = await rawRequest(port, 'POST /api/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n')
  t.match(ok, /^HTTP\/1\.1 200/, 'a plain chunked upload passes')
  t.equal(backend.seen.at(-1)!.body, 'abc')
})

t.test('502, 504, 413 and backend statuses', async t => {
  const backend = await startBackend(t, (req, res) => {
    if (req.url === '/slow') { setTimeout(() => { if (!res.destroyed) res.end('late') }, 1500); return }
    if (req.url === '/teapot') { res.writeHead(418, { 'x-why': 'tea' }); res.end('short and stout'); return }
    if (req.url === '/garbage') { res.socket!.end('NOT HTTP\r\n\r\n'); return }
    res.end('ok')
  })
  const { gateway, url } = await startGateway(t, {}, { MAX_BODY_BYTES: '1000', UPSTREAM_CONNECT_TIMEOUT_MS: '1000' })
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  const dead = collection({ base_path: '/dead', upstream_url: 'http://127.0.0.1:1' })
  gateway.setRoutes([c, dead], [
    proxy(c, { path: '/slow', target_path: '/slow', timeout_ms: 300 }),
    proxy(c, { path: '/teapot', target_path: '/teapot' }),
    proxy(c, { path: '/garbage', target_path: '/garbage' }),
    proxy(c, { path: '/upload', target_path: '/upload', methods: ['POST'] }),
    proxy(dead, { path: '/x', target_path: '/x' })
  ])
  let r = await get(`${url}/api/slow`)
  t.equal(r.status, 504)
  t.equal(JSON.parse(r.text).error.code, 'gateway_timeout')
  r = await get(`${url}/dead/x`)
  t.equal(r.status, 502)
  t.equal(JSON.parse(r.text).error.code, 'bad_gateway')
  r = await get(`${url}/api/garbage`)
  t.equal(r.status, 502)
  r = await get(`${url}/api/teapot`)
  t.equal(r.status, 418)
  t.equal(r.headers.get('x-why'), 'tea')
  t.equal(r.text, 'short and stout')
  r = await get(`${url}/api/upload`, { method: 'POST', body: 'x'.repeat(5000) })
  t.equal(r.status, 413)
  t.equal(JSON.parse(r.text).error.code, 'payload_too_large')
})

t.test('large bodies stream both ways', async t => {
  const big = Buffer.alloc(8 * 1024 * 1024, 'abcdefghij')
  const backend = await startBackend(t, (req, res, body) => {
    if (req.url === '/big') { res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(big.length) }); res.end(big); return }
    if (req.url === '/chunks') {
      res.writeHead(200)
      let i = 0
      const next = () => { if (i++ < 50) res.write(Buffer.alloc(100_000, 'z'), next); else res.end() }
      next()
      return
    }
    res.end(String(body.length))
  })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [
    proxy(c, { path: '/big', target_path: '/big' }),
    proxy(c, { path: '/chunks', target_path: '/chunks' }),
    proxy(c, { path: '/stream-up', target_path: '/up', methods: ['POST'], streaming: true })
  ])
  let res = await fetch(`${url}/api/big`, { headers: { connection: 'close' } })
  t.equal(res.headers.get('content-length'), String(big.length), 'content length kept')
  // Read slowly for a while so the gateway meets backpressure.
  const reader = res.body!.getReader()
  let n = 0
  for (let i = 0; ; i++) {
    const { done, value } = await reader.read()
    if (done) break
    n += value.length
    if (i < 20) await new Promise(resolve => setTimeout(resolve, 5))
  }
  t.equal(n, big.length)
  res = await fetch(`${url}/api/chunks`, { headers: { connection: 'close' } })
  t.equal((await res.arrayBuffer()).byteLength, 5_000_000)
  const up = Buffer.alloc(3 * 1024 * 1024, 'q')
  res = await fetch(`${url}/api/stream-up`, { method: 'POST', body: up, headers: { connection: 'close' } })
  t.equal(await res.text(), String(up.length), 'streamed upload arrives whole')
})

t.test('an event stream passes event by event', async t => {
  let sendSecond: () => void = () => {}
  const backend = await startBackend(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write('data: one\n\n')
    sendSecond = () => { res.write('data: two\n\n'); res.end() }
  })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/events', target_path: '/events', streaming: true })])
  const res = await fetch(`${url}/api/events`, { headers: { connection: 'close' } })
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  const reader = res.body!.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  t.equal(first, 'data: one\n\n', 'the first event arrives before the backend sends the second')
  sendSecond()
  let rest = ''
  for (;;) { const { done, value } = await reader.read(); if (done) break; rest += new TextDecoder().decode(value) }
  t.equal(rest, 'data: two\n\n')
})

t.test('route swaps are atomic; in-flight requests finish; close drains', async t => {
  let release: () => void = () => {}
  const backend = await startBackend(t, (req, res) => {
    if (req.url === '/hold') { release = () => res.end('held'); return }
    res.end('quick')
  })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  const p = proxy(c, { path: '/hold', target_path: '/hold' })
  const q = proxy(c, { path: '/quick', target_path: '/quick' })
  gateway.setRoutes([c], [p, q])
  const inflight = get(`${url}/api/hold`)
  while (backend.seen.length === 0) await new Promise(resolve => setTimeout(resolve, 10))
  gateway.setRoutes([c], [q])
  t.equal((await get(`${url}/api/hold`)).status, 404, 'unpublished at once')
  gateway.setRoutes([{ ...c, status: 'disabled' }], [q])
  t.equal((await get(`${url}/api/quick`)).status, 404, 'a disabled collection serves nothing')
  gateway.setRoutes([c], [p, q])
  t.equal((await get(`${url}/api/quick`)).status, 200, 'published again')
  release()
  const r = await inflight
  t.equal(r.text, 'held', 'the in-flight request finished')
})
