/**
 * http_request_node with credentials_id, on a full service: each HTTP credential type applied,
 * an OAuth2 token fetched once and reused, a rotated secret used at once (by a proxy that ran with
 * the old one too), a deleted one no longer applied, and nothing of the node's
 * headers or credential sent to another origin after a redirect.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.test('credentials on workflow HTTP requests', async t => {
  const seen: Array<{ host: string, url: string, headers: http.IncomingHttpHeaders }> = []
  let tokenCalls = 0
  let port = 0
  const backend = http.createServer((req, res) => {
    seen.push({ host: req.headers.host ?? '', url: req.url ?? '', headers: req.headers })
    if (req.url === '/token') {
      tokenCalls++
      const ok = req.headers.authorization === `Basic ${Buffer.from('app:s3cret').toString('base64')}`
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { access_token: `tok-${tokenCalls}`, token_type: 'Bearer', expires_in: 3600 } : { error: 'invalid_client' }))
      return
    }
    if (req.url === '/away') { res.writeHead(302, { location: `http://localhost:${port}/landing` }).end(); return }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ authorization: req.headers.authorization ?? null, key: req.headers['x-api-key'] ?? null, custom: req.headers['x-custom'] ?? null }))
  })
  await new Promise<void>(resolve => backend.listen(0, '127.0.0.1', resolve))
  port = (backend.address() as AddressInfo).port
  t.teardown(() => { backend.closeAllConnections(); backend.close() })
  const base = `http://127.0.0.1:${port}`

  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '', OUTBOUND_ALLOWLIST: '127.0.0.1,localhost' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  const cred = async (type: string, config: unknown) => (await api('POST', '/credentials', { name: `${type}-cred`, type, config })).body.id as string
  const basic = await cred('http_basic', { username: 'ada', password: 'pw1' })
  const bearer = await cred('http_bearer', { token: 'bt-1' })
  const header = await cred('http_header', { name: 'x-api-key', value: 'k-1' })
  const oauth = await cred('oauth2_client_credentials', { token_url: `${base}/token`, client_id: 'app', client_secret: 's3cret' })
  const c = (await api('POST', '/collections', { name: 'wf', base_path: '/wf', upstream_url: 'http://127.0.0.1:9', auth_required: false })).body
  const call = async (name: string, credentialsId: string, url = `${base}/echo`, headers: Record<string, string> = {}) => {
    const p = (await api('POST', '/proxies', { collection_id: c.id, name, methods: ['GET'], path: `/${name}`, status: 'published' })).body
    const workflow = {
      nodes: [
        { id: 't', name: 'trigger', type: 'http_trigger', settings: {} },
        { id: 'h', name: 'call', type: 'http_request_node', settings: { url, headers, credentials_id: credentialsId, timeout_ms: 10000 } },
        { id: 'r', name: 'answer', type: 'response_node', settings: { status: 200, body: '{{call.response.body}}' } }
      ],
      edges: [{ id: '1', source: 't', target: 'h' }, { id: '2', source: 'h', target: 'r' }]
    }
    const saved = await api('PUT', `/proxies/${p.id}/workflow`, { workflow, enabled: true })
    t.equal(saved.status, 200, JSON.stringify(saved.body).slice(0, 300))
    return async () => await (await fetch(`http://127.0.0.1:${s.gatewayPort}/wf/${name}`)).json() as any
  }

  t.match(await (await call('basic', basic))(), { authorization: `Basic ${Buffer.from('ada:pw1').toString('base64')}` })
  const viaBearer = await call('bearer', bearer)
  t.match(await viaBearer(), { authorization: 'Bearer bt-1' })
  t.match(await viaBearer(), { authorization: 'Bearer bt-1' }, 'the second run uses the credential kept from the first')
  t.match(await (await call('header', header))(), { key: 'k-1' })
  const viaOauth = await call('oauth', oauth)
  t.match(await viaOauth(), { authorization: 'Bearer tok-1' })
  t.match(await viaOauth(), { authorization: 'Bearer tok-1' }, 'the token is reused')
  t.equal(tokenCalls, 1, 'one token request for two calls')

  // Rotation: the next run uses the new secret, on a proxy that ran with the old one too.
  t.equal((await api('PUT', `/credentials/${bearer}`, { config: { token: 'bt-2' } })).status, 200)
  t.match(await viaBearer(), { authorization: 'Bearer bt-2' }, 'the proxy that ran before the rotation')
  t.match(await (await call('bearer2', bearer))(), { authorization: 'Bearer bt-2' })
  // A deleted credential: the next run has none to apply and fails saying so.
  const doomed = await cred('http_header', { name: 'x-api-key', value: 'k-doomed' })
  const viaDoomed = await call('doomed', doomed)
  t.match(await viaDoomed(), { key: 'k-doomed' })
  t.equal((await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/credentials/${doomed}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).status, 204)
  t.equal((await fetch(`http://127.0.0.1:${s.gatewayPort}/wf/doomed`)).status, 500, 'the deleted credential is not used')

  // A redirect to another origin (localhost, not 127.0.0.1) carries neither the credential nor the node's custom header.
  seen.length = 0
  await (await call('away', bearer, `${base}/away`, { 'x-custom': 'secret-ish', accept: 'application/json' }))()
  const landing = seen.find(x => x.url === '/landing')!
  t.ok(landing, 'the redirect was followed')
  t.equal(landing.headers.authorization, undefined, 'no credential to the other origin')
  t.equal(landing.headers['x-custom'], undefined, 'no custom header to the other origin')
  t.equal(landing.headers.accept, 'application/json', 'harmless headers kept')
  t.equal(seen.find(x => x.url === '/away')!.headers.authorization, 'Bearer bt-2', 'the first hop had it')

  // A credential that does not exist: the run fails saying so (500 to the caller, the reason in the record).
  await call('missing', '00000000-0000-0000-0000-000000000000')
  const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/wf/missing`)
  t.equal(r.status, 500)
})
