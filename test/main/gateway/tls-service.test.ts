/** mtls end to end: the service started with TLS settings, a profile made over the management API, calls by certificate. */
import https from 'node:https'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { makeTestPki, type CertPair } from '../../helpers/certs.js'
import { silentLogger, storeConfig, STORE_KINDS } from '../../helpers/db.js'
import { GATEWAY_SERVER, startBackend } from '../../helpers/gateway.js'

for (const kind of STORE_KINDS) {
  t.test(`an mtls profile saved over the API is served by the HTTPS listener (${kind})`, async t => {
    const pki = await makeTestPki(t)
    const stores = await storeConfig(t, kind)
    const s = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER,
      DATABASE_URL: stores.DATABASE_URL, DATA_DIR: stores.DATA_DIR, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
      TLS_PORT: '0', TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key, TLS_CA: pki.ca.cert
    }), { logger: silentLogger })
    t.teardown(() => s.close())
    t.type(s.gatewayTlsPort, 'number', 'the service reports its HTTPS port')
    const backend = await startBackend(t)
    const token = await s.issueToken!('alice', 'admin')
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: r.status, body: await r.json() as any }
    }
    const coll = (await api('POST', '/collections', { name: 'billing', base_path: '/billing', upstream_url: backend.url })).body
    t.equal((await api('POST', '/proxies', { collection_id: coll.id, name: 'inv', methods: ['GET'], path: '/invoices', status: 'published' })).status, 201)
    const client = (await api('POST', '/clients', { name: 'acme' })).body
    const colonForm = pki.client.fingerprint.toUpperCase().match(/../g)!.join(':')
    const made = await api('POST', `/clients/${client.id}/profiles`, { name: 'cert', auth_type: 'mtls', mtls_fingerprint: colonForm, collection_ids: [coll.id] })
    t.equal(made.status, 201)
    const profile = made.body

    const call = async (cert?: CertPair): Promise<number> => await new Promise((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1', port: s.gatewayTlsPort!, path: '/billing/invoices', ca: pki.ca.certPem, agent: false,
        ...(cert !== undefined ? { cert: cert.certPem, key: cert.keyPem } : {}),
        headers: { 'x-client-id': client.id, 'x-profile-id': profile.id, connection: 'close' }
      }, res => { res.resume(); res.on('end', () => resolve(res.statusCode!)) })
      req.on('error', reject)
      req.end()
    })
    t.equal(await call(pki.client), 200, 'the certificate whose fingerprint the profile holds')
    t.equal(backend.seen.at(-1)!.headers['x-forwarded-proto'], 'https')
    t.equal(await call(pki.other), 401, 'another certificate')
    t.equal(await call(), 401, 'no certificate')
    const plain = await fetch(`http://127.0.0.1:${s.gatewayPort}/billing/invoices`, { headers: { 'x-client-id': client.id, 'x-profile-id': profile.id, connection: 'close' } })
    await plain.text()
    t.equal(plain.status, 401, 'an mtls profile over plain HTTP')

    // A new certificate: the profile's fingerprint changes and the old certificate stops working at once.
    t.equal((await api('PUT', `/clients/${client.id}/profiles/${profile.id}`, { mtls_fingerprint: pki.other.fingerprint })).status, 200)
    t.equal(await call(pki.other), 200, 'the new certificate')
    t.equal(await call(pki.client), 401, 'the old one')
  })
}
