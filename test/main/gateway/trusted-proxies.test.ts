/**
 * TRUSTED_PROXIES on a full service: behind a trusted proxy the client's address comes from
 * X-Forwarded-For (what ip_allowlist checks), and X-Forwarded-Host/Proto pass through; from an
 * untrusted peer, or with spoofed hops, they do not.
 */
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { GATEWAY_SERVER, startBackend } from '../../helpers/gateway.js'
import { createTrustedProxies } from '../../../src/main/gateway/trusted-proxies.js'
import { parseTrustedProxies } from '../../../src/common/cidr.js'

async function setUp (t: { teardown (fn: () => unknown): void }, trusted: string) {
  const backend = await startBackend(t)
  const s: Service = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '', TRUSTED_PROXIES: trusted }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'office', base_path: '/office', upstream_url: backend.url, auth_required: true })
  await api('POST', '/proxies', { collection_id: c.id, name: 'who', methods: ['GET'], path: '/who', status: 'published' })
  const cl = await api('POST', '/clients', { name: 'branch' })
  const prof = await api('POST', `/clients/${cl.id}/profiles`, { name: 'lan', auth_type: 'api_key', collection_ids: [c.id], ip_allowlist: ['10.0.0.0/8'] })
  const call = async (headers: Record<string, string>) => {
    const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/office/who`, { headers: { authorization: `Bearer ${prof.credentials.api_key}`, 'x-client-id': cl.id, 'x-profile-id': prof.id, ...headers } })
    await r.text()
    return r.status
  }
  return { backend, call, port: s.gatewayPort }
}

t.test('without TRUSTED_PROXIES the socket address is the client and forwarded headers are the gateway\'s own', async t => {
  const { backend, call } = await setUp(t, '')
  t.equal(await call({ 'x-forwarded-for': '10.1.2.3', 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' }), 403, 'a claimed 10.x address does not pass the allowlist')
  t.equal(backend.seen.length, 0)
})

t.test('behind a trusted proxy: the client address, host and scheme from the proxy', async t => {
  const { backend, call, port } = await setUp(t, '127.0.0.1,172.16.0.0/12')
  t.equal(await call({ 'x-forwarded-for': '10.1.2.3', 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' }), 200, 'the client behind the proxy is in the allowlist')
  t.match(backend.seen[0]?.headers, { 'x-forwarded-for': '10.1.2.3, 127.0.0.1', 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' })
  t.equal(await call({ 'x-forwarded-for': '10.1.2.3, 172.16.5.5' }), 200, 'trusted hops are skipped')
  t.match(backend.seen[1]?.headers, { 'x-forwarded-host': `127.0.0.1:${port}`, 'x-forwarded-proto': 'http' }, 'no forwarded host or scheme sent: the gateway\'s own')
  t.equal(await call({ 'x-forwarded-for': '10.1.2.3, 192.0.2.7' }), 403, 'a spoofed first hop does not help: the rightmost untrusted address is the client')
  t.equal(await call({}), 403, 'no X-Forwarded-For: the proxy itself is the client')
})

t.test('the setting is checked at start, and hops are parsed as proxies write them', async t => {
  t.throws(() => loadConfig({ GATEWAY_THREADS: '1', TRUSTED_PROXIES: '10.0.0.0/8,nonsense' }), { message: /TRUSTED_PROXIES=/, lines: [/TRUSTED_PROXIES=.*'nonsense' is not an IP address or CIDR/] })
  try { loadConfig({ GATEWAY_THREADS: '1', TRUSTED_PROXIES: '10.0.0.0/33' }) } catch (err) { t.match((err as ConfigError).lines[0], /TRUSTED_PROXIES=.*'10\.0\.0\.0\/33' is not an IP address or CIDR/) }
  const tp = createTrustedProxies(parseTrustedProxies(['127.0.0.1', '::1', 'fd00::/8']))
  t.equal(tp.clientAddress('::1', '2001:db8::7, fd00::1'), '2001:db8::7', 'IPv6 hops and ranges')
  t.equal(tp.clientAddress('127.0.0.1', '[2001:db8::9]:4711'), '2001:db8::9', 'bracketed with a port')
  t.equal(tp.clientAddress('127.0.0.1', '198.51.100.4:5000'), '198.51.100.4', 'IPv4 with a port')
  t.equal(tp.clientAddress('127.0.0.1', 'garbage, 198.51.100.4'), '198.51.100.4')
  t.equal(tp.clientAddress('127.0.0.1', 'unknown'), '127.0.0.1', 'an unparseable hop stops the walk at the last trusted address')
  t.equal(tp.clientAddress('192.0.2.1', '10.1.2.3'), '192.0.2.1', 'an untrusted peer is the client whatever it claims')
})
