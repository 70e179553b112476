/**
 * What each HTTP layer does by itself, before any gateway code runs, as docs/gateway.md ("HTTP
 * layers") documents it: HTTP/1.0 clients, malformed request lines, header limits, pipelining,
 * and (node) HTTP/2 with client certificates on TLS_PORT. Every other behaviour is the same on
 * both layers and tested by the contract suite (test/main/gateway/node/*).
 */
import http2 from 'node:http2'
import t from 'tap'
import { profile, startAccessGateway } from '../../helpers/access.js'
import { collection, proxy, rawRequest, startBackend, startGateway } from '../../helpers/gateway.js'
import { createMemoryLimiter } from '../../../src/main/cache/memory-limiter.js'
import { makeTestPki } from '../../helpers/certs.js'
import type { PolicySnapshot } from '../../../src/main/access/policy-limits.js'
import type { ProfileSnapshot } from '../../../src/main/access/profile-auth.js'

const headers = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('')

for (const server of ['uws', 'node'] as const) {
  t.test(`${server}: HTTP/1.0, malformed requests, header limits`, async t => {
    const backend = await startBackend(t)
    const { gateway, port } = await startGateway(t, {}, { GATEWAY_SERVER: server })
    const c = collection({ base_path: '/api', upstream_url: backend.url })
    gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/', methods: ['GET', 'POST'] })])

    const livez10 = await rawRequest(port, 'GET /livez HTTP/1.0\r\n\r\n')
    const api10 = await rawRequest(port, 'GET /api/x HTTP/1.0\r\nHost: a\r\n\r\n')
    const forwarded10 = backend.seen.length
    const garbage = await rawRequest(port, 'GARBAGE\r\n\r\n')
    const many = await rawRequest(port, `GET /api/x HTTP/1.1\r\nHost: a\r\n${headers(120)}\r\n`)
    const few = await rawRequest(port, `GET /api/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n${headers(90)}\r\n`)
    if (server === 'uws') {
      t.match(livez10, /^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/, 'uWS refuses HTTP/1.0 with its own 505, /livez too')
      t.match(api10, /^HTTP\/1\.1 505 /)
      t.match(garbage, /^HTTP\/1\.1 505 /, 'and a malformed request line the same way')
      t.equal(many, '', 'more than 98 header fields: the connection is closed without an answer')
    } else {
      t.match(livez10, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: close\r\n[^]*\{"status":"ok"\}$/, 'HTTP/1.0: an HTTP/1.1 answer, then the connection closes')
      t.match(api10, /^HTTP\/1\.1 200 OK\r\n/, 'gateway traffic over HTTP/1.0 is served')
      t.match(api10, /x-request-id: /)
      t.notMatch(api10, /transfer-encoding: chunked/i, 'never chunked to an HTTP/1.0 client')
      t.equal(forwarded10, 1, 'and reaches the backend')
      const keep = await rawRequest(port, 'GET /livez HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /livez HTTP/1.0\r\n\r\n')
      t.equal(keep.match(/HTTP\/1\.1 200/g)?.length, 2, 'an HTTP/1.0 keep-alive client gets both answers on one connection')
      t.match(garbage, /^HTTP\/1\.1 400 Bad Request\r\n[^]*"code":"bad_request"/, 'a malformed request: 400 with a JSON error')
      t.match(many, /^HTTP\/1\.1 431 [^]*"code":"request_header_fields_too_large"/, 'more than 98 header fields: 431')
      const large = await rawRequest(port, `GET /api/x HTTP/1.1\r\nHost: a\r\nx-big: ${'y'.repeat(20_000)}\r\n\r\n`)
      t.match(large, /^HTTP\/1\.1 431 [^]*larger than 16384 bytes/, 'a head over 16 KiB: 431')
    }
    t.match(few, /^HTTP\/1\.1 200 /, '90 header fields are served by both')
    // Pipelined behind a request the gateway answers later (a backend call).
    const two = await rawRequest(port, 'GET /api/a HTTP/1.1\r\nHost: a\r\n\r\nGET /livez HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
    if (server === 'uws') t.equal(two, '', 'uWS closes the connection unanswered when a request arrives pipelined behind a pending one')
    else {
      t.equal(two.match(/HTTP\/1\.1 200/g)?.length, 2, 'node: two pipelined requests, two answers')
      t.ok(two.indexOf('"url":"/"') < two.indexOf('{"status":"ok"}'), 'in order')
    }
  })
}

t.test('node: HTTP/2 on TLS_PORT with client certificates checked in-process', async t => {
  const pki = await makeTestPki(t)
  const backend = await startBackend(t)
  const api = collection({ base_path: '/secure', upstream_url: backend.url, auth_required: true })
  const profiles = new Map<string, ProfileSnapshot>()
  profiles.set('cert', profile({ id: 'cert', auth_type: 'mtls', mtls_fingerprint: pki.client.fingerprint, collection_ids: [api.id] }))
  const { gateway, tlsPort } = await startAccessGateway(t, profiles, new Map<string, PolicySnapshot>(), createMemoryLimiter(),
    { GATEWAY_SERVER: 'node', TLS_PORT: '0', TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key, TLS_CA: pki.ca.cert })
  gateway.setRoutes([api], [proxy(api, { path: '/items', target_path: '/items', methods: ['GET', 'POST'] })])

  const call = async (cert: boolean, method = 'GET', body?: string): Promise<{ status: number, headers: http2.IncomingHttpHeaders, body: string, alpn: string | false }> => {
    const session = http2.connect(`https://127.0.0.1:${tlsPort!}`, { ca: pki.ca.certPem, ...(cert ? { cert: pki.client.certPem, key: pki.client.keyPem } : {}) })
    t.teardown(() => session.close())
    return await new Promise((resolve, reject) => {
      session.on('error', reject)
      const req = session.request({ ':method': method, ':path': '/secure/items?q=1', 'x-client-id': 'acme', 'x-profile-id': 'cert' })
      let text = ''
      let head: http2.IncomingHttpHeaders = {}
      req.on('response', h => { head = h })
      req.setEncoding('utf8')
      req.on('data', (c: string) => { text += c })
      req.on('end', () => { resolve({ status: Number(head[':status']), headers: head, body: text, alpn: session.alpnProtocol ?? false }); session.close() })
      req.on('error', reject)
      req.end(body)
    })
  }
  const ok = await call(true)
  t.equal(ok.alpn, 'h2', 'ALPN chose HTTP/2')
  t.equal(ok.status, 200, 'the matching client certificate is accepted over HTTP/2')
  t.type(ok.headers['x-request-id'], 'string')
  const seen = backend.seen.at(-1)!
  t.equal(seen.url, '/items?q=1')
  t.equal(seen.headers['x-forwarded-proto'], 'https')
  t.notOk('x-gatehouse-tls' in seen.headers, 'the internal certificate header never reaches the backend')
  const posted = await call(true, 'POST', 'hello over h2')
  t.equal(posted.status, 200)
  t.equal(backend.seen.at(-1)!.body, 'hello over h2', 'a request body over HTTP/2 reaches the backend')
  const refused = await call(false)
  t.equal(refused.status, 401, 'no certificate: 401')
})
