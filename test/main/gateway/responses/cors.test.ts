import t from 'tap'
import { collection, proxy, startBackend, startGateway } from '../../../helpers/gateway.js'
import type { CorsSettings } from '../../../../src/common/types.js'

const call = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { connection: 'close', ...(init.headers as Record<string, string> ?? {}) } })
  return { status: res.status, headers: res.headers, text: await res.text() }
}
const cors = (over: Partial<CorsSettings>): CorsSettings => ({
  allow_origins: ['https://app.example.com'], allow_methods: ['GET', 'POST'], allow_headers: [], expose_headers: [], allow_credentials: false, max_age_s: null, ...over
})

t.test('preflights are answered by the gateway, before authentication, without a backend call', async t => {
  const backend = await startBackend(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': 'https://evil.example' }); res.end('ok') })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url, auth_required: true, cors: cors({ allow_credentials: true, max_age_s: 600, allow_headers: ['X-Trace'], expose_headers: ['X-Total'] }) })
  const open = collection({ base_path: '/open', upstream_url: backend.url, cors: cors({ allow_origins: ['*', 'https://*.example.org'] }) })
  const plain = collection({ base_path: '/plain', upstream_url: backend.url })
  gateway.setRoutes([c, open, plain], [proxy(c, { path: '/items', methods: ['GET', 'POST'] }), proxy(open, { path: '/x' }), proxy(plain, { path: '/x' })])

  let r = await call(`${url}/api/items`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-trace' } })
  t.equal(r.status, 204, 'preflight answered although the collection requires authentication')
  t.equal(r.headers.get('access-control-allow-origin'), 'https://app.example.com', 'with credentials the origin is echoed, never *')
  t.equal(r.headers.get('access-control-allow-credentials'), 'true')
  t.equal(r.headers.get('access-control-allow-methods'), 'GET, POST')
  t.equal(r.headers.get('access-control-allow-headers'), 'X-Trace')
  t.equal(r.headers.get('access-control-max-age'), '600')
  t.match(r.headers.get('vary'), /Origin/)
  t.ok(r.headers.get('x-request-id'))
  t.equal(backend.seen.length, 0, 'no backend call for a preflight')

  r = await call(`${url}/api/items`, { method: 'OPTIONS', headers: { origin: 'https://other.example.com', 'access-control-request-method': 'GET' } })
  t.equal(r.status, 204, 'a disallowed origin is not refused with an error page')
  t.equal(r.headers.get('access-control-allow-origin'), null, 'but gets no allow header, so the browser blocks it')

  r = await call(`${url}/api/items`, { headers: { origin: 'https://app.example.com' } })
  t.equal(r.status, 401, 'the actual request still needs credentials')
  t.equal(r.headers.get('access-control-allow-origin'), 'https://app.example.com', 'the error is readable by the page')
  t.equal(r.headers.get('access-control-expose-headers'), 'X-Total')
  t.equal(backend.seen.length, 0)

  r = await call(`${url}/open/x`, { headers: { origin: 'https://anything.test' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('access-control-allow-origin'), '*', '* without credentials')
  t.match(r.headers.get('vary'), /Origin/)
  r = await call(`${url}/open/x`, { method: 'OPTIONS', headers: { origin: 'https://a.b.example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-one' } })
  t.equal(r.headers.get('access-control-allow-origin'), '*')
  t.equal(r.headers.get('access-control-allow-headers'), 'x-one', 'without allow_headers the requested ones are allowed')

  r = await call(`${url}/plain/x`, { headers: { origin: 'https://app.example.com' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('access-control-allow-origin'), 'https://evil.example', 'without cors the backend answer is untouched')
  r = await call(`${url}/plain/x`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } })
  t.equal(r.status, 405, 'without cors a preflight is an ordinary OPTIONS')
})

t.test('origin patterns and credentials on actual answers', async t => {
  const backend = await startBackend(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*', vary: 'Accept' }); res.end('ok') })
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/p', upstream_url: backend.url, cors: cors({ allow_origins: ['https://*.example.org', 'http://localhost:3000'], allow_credentials: true }) })
  gateway.setRoutes([c], [proxy(c, { path: '/x' })])
  const origin = async (o: string) => (await call(`${url}/p/x`, { headers: { origin: o } })).headers.get('access-control-allow-origin')
  t.equal(await origin('https://app.example.org'), 'https://app.example.org')
  t.equal(await origin('https://a.b.example.org'), 'https://a.b.example.org', 'the star covers one or more labels')
  t.equal(await origin('https://example.org'), null, 'the bare domain is not a subdomain')
  t.equal(await origin('https://app.example.org.evil.com'), null)
  t.equal(await origin('http://app.example.org'), null, 'the scheme must match')
  t.equal(await origin('https://app.example.org:8443'), null, 'so must the port')
  t.equal(await origin('http://localhost:3000'), 'http://localhost:3000')
  t.equal(await origin('http://localhost:3001'), null, 'the backend\'s own * is dropped when the collection has cors')
  const r = await call(`${url}/p/x`, { headers: { origin: 'https://app.example.org' } })
  t.equal(r.headers.get('access-control-allow-credentials'), 'true')
  t.match(r.headers.get('vary'), /Accept/, 'the backend Vary is kept')
  t.match(r.headers.get('vary'), /Origin/)
})
