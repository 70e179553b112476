/**
 * Request headers a client may not decide: a second Host header is refused (400, before matching),
 * and X-Real-IP reaches the backend as the address the gateway determined, never as the client
 * wrote it (nginx deployments trust it as the client's address).
 */
import t from 'tap'
import { collection, proxy, rawRequest, startBackend, startGateway } from '../../helpers/gateway.js'

const call = async (url: string, headers: Record<string, string>) => {
  const r = await fetch(url, { headers: { connection: 'close', ...headers } })
  await r.text()
  return r.status
}

t.test('X-Real-IP is the client address the gateway determined', async t => {
  const backend = await startBackend(t)
  const direct = await startGateway(t)
  const behind = await startGateway(t, {}, { TRUSTED_PROXIES: '127.0.0.1' })
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  const set = collection({ base_path: '/set', upstream_url: backend.url, headers: [{ name: 'X-Real-IP', value: '192.0.2.99' }] })
  for (const g of [direct, behind]) g.gateway.setRoutes([c, set], [proxy(c, { path: '/who', target_path: '/who' }), proxy(set, { path: '/who', target_path: '/who' })])

  t.equal(await call(`${direct.url}/api/who`, { 'x-real-ip': '6.6.6.6' }), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '127.0.0.1', 'a direct client: its socket address, not its claim')
  t.equal(await call(`${direct.url}/api/who`, {}), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '127.0.0.1', 'set when the client sent none')
  t.equal(await call(`${direct.url}/api/who`, { 'x-real-ip': '6.6.6.6', 'x-forwarded-for': '10.1.2.3' }), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '127.0.0.1', 'an untrusted peer\'s X-Forwarded-For does not count')

  t.equal(await call(`${behind.url}/api/who`, { 'x-real-ip': '6.6.6.6', 'x-forwarded-for': '10.1.2.3' }), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '10.1.2.3', 'behind a trusted proxy: the client from X-Forwarded-For')
  t.equal(await call(`${behind.url}/api/who`, { 'x-real-ip': '6.6.6.6' }), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '127.0.0.1', 'a trusted proxy that names no client is the client')

  // One header, not the client's value appended to the gateway's: Node joins repeated lines with ', '.
  t.notMatch(backend.seen.map(s => String(s.headers['x-real-ip'])).join(' '), /6\.6\.6\.6|,/, 'the client\'s value never reaches the backend')

  t.equal(await call(`${direct.url}/set/who`, { 'x-real-ip': '6.6.6.6' }), 200)
  t.equal(backend.seen.at(-1)!.headers['x-real-ip'], '192.0.2.99', 'a collection header named X-Real-IP is the operator\'s choice and wins')
})

t.test('a request with two Host headers is refused with 400, the connection closed, nothing forwarded', async t => {
  const backend = await startBackend(t)
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/who', target_path: '/who' })])
  for (const hosts of [['a.example', 'b.example'], ['a.example', 'a.example']]) {
    const out = await rawRequest(port, `GET /api/who HTTP/1.1\r\n${hosts.map(h => `Host: ${h}\r\n`).join('')}\r\n`, 3000)
    t.match(out, /^HTTP\/1\.1 400[ \r]/, `${hosts.join(' + ')}: 400`)
    t.match(out, /\r\nconnection: close\r\n/i, 'and the connection is closed')
    const body = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as { error: { code: string, message: string }, request_id: string }
    t.equal(body.error.code, 'bad_request')
    t.equal(body.error.message, 'The request has more than one Host header.')
    t.type(body.request_id, 'string')
  }
  t.equal(backend.seen.length, 0, 'nothing reached the backend')
  t.match(await rawRequest(port, 'GET /api/who HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n', 3000), /^HTTP\/1\.1 200 /, 'one Host header is served')
})
