/**
 * The shipped front-proxy examples, run for real in front of two gateway instances sharing one
 * store: deploy/nginx/gatehouse.conf and deploy/haproxy/haproxy.cfg (addresses replaced by the
 * test's loopback ports). Also what HTTP/1.0 clients get: nginx's default proxy_pass, ApacheBench
 * and HAProxy's default health check speak HTTP/1.0, which the uWS layer refuses with 505 (the
 * examples speak HTTP/1.1), and which the node layer (GATEWAY_SERVER=node) serves: there every
 * default client and proxy, curl --http2 over TLS included, gets the gateway's real answers.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start, type Service } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { makeTestPki } from '../helpers/certs.js'
import { freePort } from '../helpers/ports.js'
import { eventually } from '../helpers/wait.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const NGINX_EXAMPLE = fs.readFileSync(path.join(root, 'deploy/nginx/gatehouse.conf'), 'utf8')
const HAPROXY_EXAMPLE = fs.readFileSync(path.join(root, 'deploy/haproxy/haproxy.cfg'), 'utf8')

type T = { teardown (fn: () => unknown): void }

/** Two instances on one PostgreSQL database, an open collection with one published proxy. */
async function twoInstances (t: T, server: 'uws' | 'node' = 'uws') {
  const backend = await startBackend(t, (req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ path: req.url, xff: req.headers['x-forwarded-for'] ?? null })) })
  const url = await createTestDatabase(t)
  const startOne = async (): Promise<Service> => {
    const s = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER: server, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATABASE_URL: url, DATA_DIR: await createTempDir(t), TRUSTED_PROXIES: '127.0.0.1' }), { logger: silentLogger })
    t.teardown(async () => { await s.close() })
    return s
  }
  // One after the other, as two operators would start them; a pair, so services[0] and [1] are typed.
  const services: [Service, Service] = [await startOne(), await startOne()]
  const token = await services[0].issueToken!('ops', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${services[0].managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  await api('POST', '/proxies', { collection_id: c.id, name: 'item', methods: ['GET'], path: '/items/{id}', status: 'published' })
  // Both instances serve it (the second learns of it through the store).
  for (const s of services) {
    for (let i = 0; i < 100; i++) {
      const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/shop/items/1`)
      await r.arrayBuffer()
      if (r.status === 200) break
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
  return { services, backend, token }
}

function daemon (t: T, cmd: string, args: string[]): ChildProcess {
  const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  p.stderr!.on('data', d => { err += String(d) })
  p.on('exit', code => { if (code !== 0 && code !== null) process.stderr.write(`${cmd} exited ${code}: ${err}\n`) })
  t.teardown(() => { p.kill('SIGTERM') })
  return p
}

async function until (check: () => Promise<boolean>, what: string): Promise<void> {
  if (await eventually(async () => await check().catch(() => false), undefined, 50)) return
  throw new Error(`timed out waiting for ${what}`)
}

/** The example with its addresses replaced: gateways, public port, management. */
function nginxConfig (dir: string, example: string, gateways: number[], port: number, mgmt: { listen: number, to: number }): string {
  let conf = example
    .replace('server 127.0.0.1:8080 max_fails', `server 127.0.0.1:${gateways[0]} max_fails`)
    .replace('server 127.0.0.1:8082 max_fails', `server 127.0.0.1:${gateways[1]} max_fails`)
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
    .replace('listen 127.0.0.1:8090;', `listen 127.0.0.1:${mgmt.listen};`)
    .replaceAll('proxy_pass http://127.0.0.1:8081;', `proxy_pass http://127.0.0.1:${mgmt.to};`)
  const file = path.join(dir, 'nginx.conf')
  fs.writeFileSync(file, `daemon off;\nworker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;\n${conf}\n}\n`)
  return file
}

t.test('nginx with the shipped example forwards to both instances over HTTP/1.1; its defaults get 505', async t => {
  const { services, backend, token } = await twoInstances(t)
  const dir = await createTempDir(t)
  const [port, mgmtPort] = [await freePort(), await freePort()]
  const conf = nginxConfig(dir, NGINX_EXAMPLE, services.map(s => s.gatewayPort), port, { listen: mgmtPort, to: services[0].managementPort })
  daemon(t, 'nginx', ['-c', conf, '-p', dir])
  await until(async () => (await fetch(`http://127.0.0.1:${port}/shop/items/1`)).status === 200, 'nginx')

  const seenBefore = backend.seen.length
  for (let i = 0; i < 6; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/shop/items/${i}`)
    t.equal(r.status, 200)
    const body = await r.json() as { path: string, xff: string }
    t.equal(body.path, `/items/${i}`)
    t.match(body.xff, /^127\.0\.0\.1, 127\.0\.0\.1$/, 'the client address from nginx, then nginx\'s own hop')
  }
  t.equal(backend.seen.length - seenBefore, 6)

  const events = await fetch(`http://127.0.0.1:${mgmtPort}/api/v1/events/stream`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(events.status, 200, 'the event stream through the internal management server')
  t.match(events.headers.get('content-type'), /text\/event-stream/)
  const reader = events.body!.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  t.match(first, /^id: /, 'its first frame arrives unbuffered')
  await reader.cancel()

  // The same config without proxy_http_version 1.1: nginx's default HTTP/1.0 upstream requests.
  const dir10 = await createTempDir(t)
  const port10 = await freePort()
  const conf10 = nginxConfig(dir10, NGINX_EXAMPLE.replace(/^\s*proxy_http_version 1\.1;.*$/gm, '').replace(/^\s*proxy_set_header Connection "";.*$/gm, '').replace(/^\s*keepalive 64;.*$/m, ''),
    services.map(s => s.gatewayPort), port10, { listen: await freePort(), to: services[0].managementPort })
  daemon(t, 'nginx', ['-c', conf10, '-p', dir10])
  await until(async () => { await fetch(`http://127.0.0.1:${port10}/shop/items/1`); return true }, 'nginx (defaults)')
  const r10 = await fetch(`http://127.0.0.1:${port10}/shop/items/1`)
  t.equal(r10.status, 505, 'without proxy_http_version 1.1 every call answers 505 HTTP Version Not Supported')
  await r10.arrayBuffer()
})

t.test('ApacheBench (HTTP/1.0) gets 505 from the gateway and 200 through the nginx example', async t => {
  const { services } = await twoInstances(t)
  const direct = await run('ab', ['-n', '20', '-c', '2', `http://127.0.0.1:${services[0].gatewayPort}/shop/items/1`])
  t.match(direct.stdout, /Non-2xx responses:\s+20/, 'every ab request to the gateway itself is refused (505)')

  const dir = await createTempDir(t)
  const port = await freePort()
  const conf = nginxConfig(dir, NGINX_EXAMPLE, services.map(s => s.gatewayPort), port, { listen: await freePort(), to: services[0].managementPort })
  daemon(t, 'nginx', ['-c', conf, '-p', dir])
  await until(async () => (await fetch(`http://127.0.0.1:${port}/shop/items/1`)).status === 200, 'nginx')
  const viaNginx = await run('ab', ['-n', '200', '-c', '4', '-k', `http://127.0.0.1:${port}/shop/items/1`])
  t.match(viaNginx.stdout, /Complete requests:\s+200/)
  t.notMatch(viaNginx.stdout, /Non-2xx responses/, 'through nginx (HTTP/1.1 upstream) all 200')
  t.match(viaNginx.stdout, /Failed requests:\s+0/)
})

t.test('HAProxy with the shipped example: HTTP/1.1 health checks mark both up and calls go through; its default check would mark them down', async t => {
  const { services } = await twoInstances(t)
  const dir = await createTempDir(t)
  const [port, stats] = [await freePort(), await freePort()]
  const cfg = HAPROXY_EXAMPLE
    .replace('bind :80', `bind 127.0.0.1:${port}`)
    .replace('server gw1 127.0.0.1:8080', `server gw1 127.0.0.1:${services[0].gatewayPort}`)
    .replace('server gw2 127.0.0.1:8082', `server gw2 127.0.0.1:${services[1].gatewayPort}`) +
    `\nlisten stats\n    bind 127.0.0.1:${stats}\n    stats enable\n    stats uri /stats\n`
  const file = path.join(dir, 'haproxy.cfg')
  fs.writeFileSync(file, cfg)
  await run('haproxy', ['-c', '-f', file])
  daemon(t, 'haproxy', ['-db', '-f', file])
  const status = async (): Promise<Record<string, string>> => {
    const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text()
    return Object.fromEntries(csv.split('\n').filter(l => l.startsWith('gatehouse,gw')).map(l => { const f = l.split(','); return [f[1], f[17]] }))
  }
  let last: Record<string, string> = {}
  await until(async () => { last = await status(); return last.gw1 === 'UP' && last.gw2 === 'UP' }, 'both servers UP').catch(err => { throw new Error(`${(err as Error).message}: ${JSON.stringify(last)}`) })
  for (let i = 0; i < 4; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/shop/items/${i}`)
    t.equal(r.status, 200)
    t.equal((await r.json() as { path: string }).path, `/items/${i}`)
  }
  // HAProxy passes an HTTP/1.0 client's version through: the uWS layer refuses it (docs/deploy.md: GATEWAY_SERVER=node).
  const c10 = await run('curl', ['-s', '-i', '--http1.0', `http://127.0.0.1:${port}/shop/items/1`])
  t.match(c10.stdout, /^HTTP\/1\.[01] 505 /, 'an HTTP/1.0 client through HAProxy gets the uWS layer\'s 505')

  // The default `option httpchk` (HTTP/1.0 OPTIONS /) against the same gateways.
  const dir2 = await createTempDir(t)
  const [port2, stats2] = [await freePort(), await freePort()]
  const cfg2 = cfg.replace(/^\s*http-check send .*$/m, '').replace(/^\s*http-check expect .*$/m, '')
    .replace(`bind 127.0.0.1:${port}`, `bind 127.0.0.1:${port2}`).replace(`bind 127.0.0.1:${stats}`, `bind 127.0.0.1:${stats2}`)
  const file2 = path.join(dir2, 'haproxy.cfg')
  fs.writeFileSync(file2, cfg2)
  daemon(t, 'haproxy', ['-db', '-f', file2])
  await until(async () => {
    const csv = await (await fetch(`http://127.0.0.1:${stats2}/stats;csv`)).text()
    return csv.split('\n').filter(l => l.startsWith('gatehouse,gw')).every(l => l.split(',')[17] === 'DOWN')
  }, 'the default check to mark both DOWN')
  t.pass('HAProxy\'s default HTTP/1.0 check marks every instance down (the gateway answers 505)')
})

t.test('GATEWAY_SERVER=node: nginx defaults, HAProxy httpchk, ab, curl --http1.0 and curl --http2 get the real answers', async t => {
  const { services, backend } = await twoInstances(t, 'node')
  const ports = services.map(s => s.gatewayPort)

  // nginx with a plain proxy_pass: HTTP/1.0 to the gateway, no keep-alive.
  const dir = await createTempDir(t)
  const port = await freePort()
  const plain = NGINX_EXAMPLE.replace(/^\s*proxy_http_version 1\.1;.*$/gm, '').replace(/^\s*proxy_set_header Connection "";.*$/gm, '').replace(/^\s*keepalive 64;.*$/m, '')
  t.notMatch(plain, /^\s*proxy_http_version/m, 'no proxy_http_version left')
  daemon(t, 'nginx', ['-c', nginxConfig(dir, plain, ports, port, { listen: await freePort(), to: services[0].managementPort }), '-p', dir])
  await until(async () => (await fetch(`http://127.0.0.1:${port}/shop/items/1`)).status === 200, 'nginx (plain proxy_pass)')
  const before = backend.seen.length
  for (let i = 0; i < 4; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/shop/items/${i}`)
    t.equal(r.status, 200, 'nginx\'s HTTP/1.0 upstream request is served')
    t.equal((await r.json() as { path: string }).path, `/items/${i}`)
  }
  t.equal(backend.seen.length - before, 4)
  const missing = await fetch(`http://127.0.0.1:${port}/nothing`)
  t.equal(missing.status, 404, 'the gateway\'s own answers come through too')
  t.equal((await missing.json() as any).error.code, 'not_found')

  // HAProxy: `option httpchk GET /livez` (HTTP/1.0), and an HTTP/1.0 client passed through.
  const hdir = await createTempDir(t)
  const [hport, stats] = [await freePort(), await freePort()]
  const cfg = HAPROXY_EXAMPLE
    .replace(/^\s*option httpchk$/m, '    option httpchk GET /livez')
    .replace(/^\s*http-check send .*$/m, '').replace(/^\s*http-check expect .*$/m, '')
    .replace('bind :80', `bind 127.0.0.1:${hport}`)
    .replace('server gw1 127.0.0.1:8080', `server gw1 127.0.0.1:${ports[0]}`)
    .replace('server gw2 127.0.0.1:8082', `server gw2 127.0.0.1:${ports[1]}`) +
    `\nlisten stats\n    bind 127.0.0.1:${stats}\n    stats enable\n    stats uri /stats\n`
  t.match(cfg, /option httpchk GET \/livez\n/)
  const file = path.join(hdir, 'haproxy.cfg')
  fs.writeFileSync(file, cfg)
  daemon(t, 'haproxy', ['-db', '-f', file])
  let last = ''
  await until(async () => {
    last = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text()
    return last.split('\n').filter(l => l.startsWith('gatehouse,gw')).every(l => l.split(',')[17] === 'UP')
  }, 'HAProxy\'s HTTP/1.0 check to mark both UP').catch(err => { throw new Error(`${(err as Error).message}: ${last}`) })
  t.pass('the HTTP/1.0 health check marks both instances UP')
  const viaHaproxy10 = await run('curl', ['-s', '--http1.0', '-i', `http://127.0.0.1:${hport}/shop/items/7`])
  t.match(viaHaproxy10.stdout, /^HTTP\/1\.[01] 200 /, 'an HTTP/1.0 client through HAProxy gets 200')
  t.match(viaHaproxy10.stdout, /"path":"\/items\/7"/)
  const abHaproxy = await run('ab', ['-n', '200', '-c', '4', `http://127.0.0.1:${hport}/shop/items/1`])
  t.match(abHaproxy.stdout, /Complete requests:\s+200/)
  t.notMatch(abHaproxy.stdout, /Non-2xx responses/, 'ab through HAProxy: all 200')

  // ab and curl --http1.0 straight at the gateway.
  const ab = await run('ab', ['-n', '200', '-c', '4', `http://127.0.0.1:${ports[0]}/shop/items/1`])
  t.match(ab.stdout, /Complete requests:\s+200/)
  t.match(ab.stdout, /Failed requests:\s+0/)
  t.notMatch(ab.stdout, /Non-2xx responses/, 'ab (HTTP/1.0) straight at the gateway: all 200')
  const abk = await run('ab', ['-n', '200', '-c', '4', '-k', `http://127.0.0.1:${ports[0]}/shop/items/1`])
  t.match(abk.stdout, /Keep-Alive requests:\s+200/, 'ab -k: HTTP/1.0 keep-alive is honoured')
  t.notMatch(abk.stdout, /Non-2xx responses/)
  const c10 = await run('curl', ['-s', '--http1.0', '-i', `http://127.0.0.1:${ports[0]}/shop/items/2`])
  t.match(c10.stdout, /^HTTP\/1\.1 200 OK\r\n/, 'curl --http1.0: 200')
  t.match(c10.stdout, /\r\nConnection: close\r\n/i, 'and the connection closes after it (RFC 9112)')
  t.match(c10.stdout, /"path":"\/items\/2"/)
  const livez = await run('curl', ['-s', '--http1.0', `http://127.0.0.1:${ports[0]}/livez`])
  t.equal(livez.stdout, '{"status":"ok"}')
})

t.test('GATEWAY_SERVER=node: curl --http2 over TLS gets HTTP/2 answers from the gateway', async t => {
  const pki = await makeTestPki(t)
  const backend = await startBackend(t, (req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ path: req.url, proto: req.headers['x-forwarded-proto'] })) })
  const s = await start(loadConfig({
    GATEWAY_THREADS: '1',
    GATEWAY_SERVER: 'node', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATABASE_URL: '', DATA_DIR: await createTempDir(t),
    TLS_PORT: '0', TLS_CERT: pki.server.cert, TLS_KEY: pki.server.key
  }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('ops', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  await api('POST', '/proxies', { collection_id: c.id, name: 'item', methods: ['GET', 'POST'], path: '/items/{id}', status: 'published' })
  const base = `https://127.0.0.1:${s.gatewayTlsPort!}`
  await until(async () => (await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--http2', '--cacert', pki.ca.cert, `${base}/shop/items/1`])).stdout === '200', 'the route over TLS')
  const r = await run('curl', ['-s', '-i', '--http2', '--cacert', pki.ca.cert, `${base}/shop/items/5`])
  t.match(r.stdout, /^HTTP\/2 200 ?\r\n/, 'HTTP/2 by ALPN')
  t.match(r.stdout, /x-request-id: /)
  t.match(r.stdout, /"path":"\/items\/5","proto":"https"/)
  const posted = await run('curl', ['-s', '--http2', '--cacert', pki.ca.cert, '-X', 'POST', '--data-binary', 'abc', `${base}/shop/items/6`])
  t.match(posted.stdout, /"path":"\/items\/6"/)
  t.equal(backend.seen.at(-1)!.body, 'abc', 'a request body over HTTP/2 reaches the backend')
  const h1 = await run('curl', ['-s', '-i', '--http1.1', '--cacert', pki.ca.cert, `${base}/livez`])
  t.match(h1.stdout, /^HTTP\/1\.1 200 /, 'HTTP/1.1 on the same port by ALPN')
  const missing = await run('curl', ['-s', '-i', '--http2', '--cacert', pki.ca.cert, `${base}/nothing`])
  t.match(missing.stdout, /^HTTP\/2 404 ?\r\n[^]*"code":"not_found"/, 'the gateway\'s own errors over HTTP/2')
})
