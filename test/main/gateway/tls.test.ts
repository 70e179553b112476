/** The gateway's TLS listener: mtls profiles by client certificate, other profiles and open APIs over TLS. */
import fs from 'node:fs'
import https from 'node:https'
import path from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/main/config/config.js'
import { createMemoryLimiter } from '../../../src/main/cache/memory-limiter.js'
import { hashApiKey, type ProfileSnapshot } from '../../../src/main/access/profile-auth.js'
import type { PolicySnapshot } from '../../../src/main/access/policy-limits.js'
import { profile, startAccessGateway } from '../../helpers/access.js'
import { collection, proxy, startBackend } from '../../helpers/gateway.js'
import { makeTestPki, type CertPair } from '../../helpers/certs.js'


interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: any }

t.test('TLS listener: client certificates for mtls profiles, other profiles and open APIs over TLS', async t => {
  const pki = await makeTestPki(t)
  const backend = await startBackend(t)
  const api = collection({ base_path: '/secure', upstream_url: backend.url, auth_required: true })
  const open = collection({ base_path: '/open', upstream_url: backend.url, auth_required: false })
  const profiles = new Map<string, ProfileSnapshot>()
  const add = (p: ProfileSnapshot) => profiles.set(p.id, p)
  // Stored fingerprints may use the colon form; the gateway compares hex digits.
  add(profile({ id: 'cert', auth_type: 'mtls', mtls_fingerprint: pki.client.fingerprint.toUpperCase().match(/../g)!.join(':'), collection_ids: [api.id] }))
  add(profile({ id: 'rogue', auth_type: 'mtls', mtls_fingerprint: pki.rogue.fingerprint, collection_ids: [api.id] }))
  add(profile({ id: 'key', auth_type: 'api_key', api_key_hash: hashApiKey('tls_key'), collection_ids: [api.id] }))
  const policies = new Map<string, PolicySnapshot>()
  const { gateway, port, tlsPort } = await startAccessGateway(t, profiles, policies, createMemoryLimiter(),
    { TLS_PORT: '0', TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key, TLS_CA: pki.ca.cert })
  t.type(tlsPort, 'number', 'the TLS listener is up')
  gateway.setRoutes([api, open], [
    proxy(api, { path: '/items', target_path: '/items', methods: ['GET'] }),
    proxy(open, { path: '/echo', target_path: '/echo', methods: ['POST'] }),
    proxy(open, { path: '/small', target_path: '/small', methods: ['POST'], max_body_bytes: 1000 })
  ])

  const tls = async (p: string, opts: { cert?: CertPair, headers?: Record<string, string>, method?: string, body?: string } = {}): Promise<Answer> => {
    return await new Promise((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1', port: tlsPort!, path: p, method: opts.method ?? 'GET', ca: pki.ca.certPem, agent: false,
        ...(opts.cert !== undefined ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}),
        headers: { connection: 'close', ...opts.headers }
      }, res => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => { text += c })
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text }))
      })
      req.on('error', reject)
      req.end(opts.body)
    })
  }
  const who = (profile: string) => ({ 'x-client-id': 'acme', 'x-profile-id': profile })

  // mtls: the matching certificate is enough, no Authorization header.
  let r = await tls('/secure/items?a=1', { cert: pki.client, headers: who('cert') })
  t.equal(r.status, 200, 'the matching client certificate is accepted')
  t.type(r.headers['x-request-id'], 'string')
  let seen = backend.seen.at(-1)!
  t.equal(seen.url, '/items?a=1')
  t.equal(seen.headers['x-forwarded-proto'], 'https', 'the backend learns the call came over TLS')
  t.equal(seen.headers['x-forwarded-for'], '127.0.0.1', 'and from the real client address')
  t.notOk('x-gatehouse-tls' in seen.headers, 'the relay header never reaches the backend')
  t.notOk('x-client-id' in seen.headers)
  t.notOk('x-profile-id' in seen.headers)

  r = await tls('/secure/items', { cert: pki.other, headers: who('cert') })
  t.equal(r.status, 401, 'another certificate from the same CA is refused')
  t.equal(r.body.error.code, 'unauthorized')
  t.match(r.body.error.message, /client certificate/)
  t.type(r.body.request_id, 'string')
  t.equal((await tls('/secure/items', { headers: who('cert') })).status, 401, 'no certificate is refused')
  t.equal((await tls('/secure/items', { cert: pki.rogue, headers: who('rogue') })).status, 401,
    'a certificate that does not chain to TLS_CA is refused even when its fingerprint is pinned')
  t.equal((await tls('/secure/items', { cert: pki.client, headers: who('key') })).status, 401, 'a certificate does not replace an api_key')

  // Other profiles work over TLS, with or without a client certificate.
  t.equal((await tls('/secure/items', { headers: { ...who('key'), authorization: 'Bearer tls_key' } })).status, 200, 'an api_key profile over TLS')
  t.equal((await tls('/secure/items', { cert: pki.other, headers: { ...who('key'), authorization: 'Bearer tls_key' } })).status, 200)
  t.notOk('authorization' in backend.seen.at(-1)!.headers)

  // Open APIs over TLS: bodies both ways.
  r = await tls('/open/echo', { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 200)
  t.same(r.body, { method: 'POST', url: '/echo', body: '{"n":1}' })
  t.equal(r.headers['x-backend'], 'yes', 'backend headers come back')
  r = await tls('/open/echo', { method: 'POST', body: 'x'.repeat(100_000), headers: { 'transfer-encoding': 'chunked' } })
  t.equal(r.status, 200, 'a chunked body is relayed')
  t.equal(r.body.body.length, 100_000)
  // Refusals before the body is read reach the client intact, announced or chunked.
  for (const headers of [{}, { 'transfer-encoding': 'chunked' }] as Array<Record<string, string>>) {
    r = await tls('/open/small', { method: 'POST', body: 'y'.repeat(300_000), headers })
    t.equal(r.status, 413, `a body over the proxy's limit (${Object.keys(headers).length > 0 ? 'chunked' : 'announced'})`)
    t.equal(r.body.error.code, 'payload_too_large')
  }
  r = await tls('/nowhere')
  t.equal(r.status, 404, 'gateway errors come back as they are')
  t.equal(r.body.error.code, 'not_found')

  // Plain HTTP cannot claim a certificate: a forged relay header is dropped and ignored.
  const forged = { 'x-gatehouse-tls': `${'0'.repeat(48)} ${pki.client.fingerprint} 10.1.2.3`, connection: 'close' }
  let res = await fetch(`http://127.0.0.1:${port}/secure/items`, { headers: { ...who('cert'), ...forged } })
  t.equal(res.status, 401, 'a forged relay header does not authenticate')
  await res.text()
  res = await fetch(`http://127.0.0.1:${port}/open/echo`, { method: 'POST', body: 'a', headers: forged })
  await res.text()
  seen = backend.seen.at(-1)!
  t.notOk('x-gatehouse-tls' in seen.headers, 'nor is it forwarded')
  t.equal(seen.headers['x-forwarded-proto'], 'http')
  t.equal(seen.headers['x-forwarded-for'], '127.0.0.1')
})

t.test('TLS settings are checked at start', async t => {
  const pki = await makeTestPki(t)
  const bad = (env: Record<string, string>): string[] => {
    try { loadConfig(env); return [] } catch (err) { return err instanceof ConfigError ? err.lines : ['not a ConfigError'] }
  }
  t.same(bad({ TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key, TLS_CA: pki.ca.cert }), [], 'a certificate, its key and a CA')
  const c = loadConfig({ TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key })
  t.equal(c.TLS_PORT, 8443, 'TLS_PORT defaults to 8443')
  t.equal(c.TLS_CA, '')
  t.equal(loadConfig({}).TLS_CERT, '', 'TLS is off by default')
  const missing = path.join(pki.dir, 'missing.pem')
  t.match(bad({ TLS_CERT: missing, TLS_KEY: pki.server.key }), [/^TLS_CERT=.* is invalid: expected a readable PEM certificate file/])
  t.match(bad({ TLS_CERT: pki.server.cert }), [/^TLS_KEY=/], 'a certificate without its key')
  t.match(bad({ TLS_KEY: pki.server.key }), [/^TLS_CERT=/], 'a key without its certificate')
  t.match(bad({ TLS_CERT: pki.server.key, TLS_KEY: pki.server.cert }), [/^TLS_CERT=/, /^TLS_KEY=/], 'files swapped')
  t.match(bad({ TLS_CA: pki.ca.cert }), [/^TLS_CA=/], 'a CA without a certificate and key')
  const unreadable = path.join(pki.dir, 'unreadable.crt')
  fs.writeFileSync(unreadable, 'not a certificate')
  t.match(bad({ TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key, TLS_CA: unreadable }), [/^TLS_CA=/])
})
