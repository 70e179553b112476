/**
 * deploy/run-local.sh, run as a user would: two instances on one PostgreSQL database and one
 * Redis behind nginx. A proxy created through the management API (via nginx's internal server)
 * is served through nginx by both instances; stopping the script stops everything it started.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { createTempDir, createTestDatabase } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { freePort } from '../helpers/ports.js'
import { requireService, TEST_REDIS_URL } from '../helpers/services.js'
import { retryUntil } from '../helpers/wait.js'

const root = path.resolve(import.meta.dirname, '../..')

t.test('run-local.sh: two instances behind nginx serve what one of them was told', async t => {
  const backend = await startBackend(t, (req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ path: req.url })) })
  const ports = { nginx: await freePort(), nginxMgmt: await freePort(), gw: [await freePort(), await freePort()], mgmt: [await freePort(), await freePort()] }
  const env = {
    ...process.env,
    DATABASE_URL: await createTestDatabase(t),
    REDIS_URL: requireService(TEST_REDIS_URL, 'Redis'),
    NGINX_PORT: String(ports.nginx),
    NGINX_MANAGEMENT_PORT: String(ports.nginxMgmt),
    GATEWAY_PORTS: ports.gw.join(' '),
    MANAGEMENT_PORTS: ports.mgmt.join(' '),
    RUN_DIR: await createTempDir(t)
  }
  const script = spawn('bash', [path.join(root, 'deploy/run-local.sh')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  script.stdout.on('data', d => { out += String(d) })
  script.stderr.on('data', d => { out += String(d) })
  const exited = new Promise<number | null>(resolve => script.on('exit', code => resolve(code)))
  t.teardown(async () => { if (script.exitCode === null) { script.kill('SIGTERM'); await exited } })

  for (let i = 0; i < 600 && !/admin token: \S+/.test(out) && script.exitCode === null; i++) await new Promise(resolve => setTimeout(resolve, 100))
  t.match(out, /ready: gateway http:\/\/127\.0\.0\.1:\d+ \(nginx\)/, 'the script says where it is ready')
  const token = /admin token: (\S+)/.exec(out)![1]

  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${ports.nginxMgmt}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const c = await api('POST', '/collections', { name: 'local', base_path: '/local', upstream_url: backend.url, auth_required: false })
  t.ok(c.id, 'created through nginx\'s management server')
  await api('POST', '/proxies', { collection_id: c.id, name: 'thing', methods: ['GET'], path: '/things/{id}', status: 'published' })

  // Both instances serve it: directly on their gateway ports, and through nginx.
  for (const port of ports.gw) {
    const status = await retryUntil(async () => {
      const r = await fetch(`http://127.0.0.1:${port}/local/things/1`)
      await r.arrayBuffer()
      return r.status
    }, s => s === 200)
    t.equal(status, 200, `instance on ${port} serves the new proxy`)
  }
  for (let i = 0; i < 4; i++) {
    const r = await fetch(`http://127.0.0.1:${ports.nginx}/local/things/${i}`)
    t.equal(r.status, 200)
    t.same(await r.json(), { path: `/things/${i}` })
  }

  script.kill('SIGTERM')
  t.equal(await exited, 0, 'the script stops cleanly')
  t.match(out, /\[run-local\] stopped/)
  for (const port of [ports.nginx, ...ports.gw, ...ports.mgmt]) {
    await t.rejects(fetch(`http://127.0.0.1:${port}/livez`), { message: 'fetch failed' }, `nothing listens on ${port} any more`)
  }
})
