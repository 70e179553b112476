/**
 * The configuration file with the whole service: CONFIG_FILE on the compiled entry point
 * (load at start, 409 on writes, SIGHUP reload, a bad file kept out), and an applied file served
 * by two instances that share PostgreSQL and Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { stringify as toYaml } from 'yaml'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { freePort } from '../../helpers/ports.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'
import { eventually } from '../../helpers/wait.js'

const ENTRY = new URL('../../../dist/src/main/index.js', import.meta.url).pathname
const TOKEN_CLI = new URL('../../../dist/src/main/cli/token.js', import.meta.url).pathname

/** Waits for what a user would see; the deadline (90 s) is a backstop for a first start of the embedded store on a loaded machine. */
async function waitFor (fn: () => Promise<boolean>, what: string): Promise<void> {
  if (!await eventually(async () => await fn().catch(() => false), 90_000, 100)) throw new Error(`timed out waiting for ${what}`)
}

const get = async (url: string, headers: Record<string, string> = {}) => await fetch(url, { headers: { connection: 'close', ...headers } })

function gatewayFile (backend: string, proxies: Array<{ name: string, path: string }>) {
  return {
    format_version: 1,
    collections: [{
      name: 'demo', base_path: '/demo', upstream_url: backend, auth_required: false,
      proxies: proxies.map(p => ({ name: p.name, methods: ['GET'], path: p.path, status: 'published' }))
    }],
    policies: [{ name: 'gold', rate_limit: { requests: 100, per_seconds: 60 } }],
    credentials: [{ name: 'api', type: 'http_bearer', config: { token: '${DEMO_API_TOKEN}' } }]
  }
}

t.test('CONFIG_FILE: served at start, writes refused with 409, SIGHUP reloads, a bad file changes nothing', async t => {
  const dir = await createTempDir(t)
  const backend = await startBackend(t)
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, toYaml(gatewayFile(backend.url, [{ name: 'x', path: '/x' }])))
  const [gwPort, mgPort] = [await freePort(), await freePort()]
  const env = { ...process.env, DATA_DIR: join(dir, 'data'), PORT: String(gwPort), HOST: '127.0.0.1', MANAGEMENT_PORT: String(mgPort), LOG_LEVEL: 'info', LOG_FORMAT: 'json', DATABASE_URL: '', CACHE_TYPE: 'memory', CONFIG_FILE: file, DEMO_API_TOKEN: 't0ken' }
  const child: ChildProcess = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout!.on('data', d => { log += d })
  child.stderr!.on('data', d => { log += d })
  t.teardown(() => { child.kill('SIGKILL') })
  await waitFor(async () => log.includes('management tokens come from the built-in local issuer'), 'start-up log')
  t.match(log, /configuration loaded from CONFIG_FILE/)

  const g = `http://127.0.0.1:${gwPort}`
  const m = `http://127.0.0.1:${mgPort}/api/v1`
  let res = await get(`${g}/demo/x`)
  t.equal(res.status, 200, 'the file is served from the start')
  t.equal(backend.seen.at(-1)!.url, '/x')

  const token = await new Promise<string>((resolve, reject) => {
    const p = spawn(process.execPath, [TOKEN_CLI, '--sub', 'alice', '--role', 'admin'], { env })
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.on('exit', code => code === 0 ? resolve(out.trim()) : reject(new Error(`token exited ${code}`)))
  })
  const auth = { authorization: `Bearer ${token}` }
  const write = await fetch(`${m}/collections`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ name: 'n', base_path: '/n', upstream_url: backend.url }) })
  t.equal(write.status, 409, 'a management write is refused')
  const body = await write.json() as any
  t.equal(body.error.code, 'conflict')
  t.match(body.error.message, /CONFIG_FILE/)
  t.match(body.error.details, [{ field: 'CONFIG_FILE' }], 'the answer names the setting')
  const cols = await (await get(`${m}/collections`, auth)).json() as any
  t.same(cols.items.map((c: any) => c.base_path), ['/demo'], 'reads still work')
  const apply = await fetch(`${m}/config/apply`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', connection: 'close' }, body: '{"format_version":1}' })
  t.equal(apply.status, 409, 'the apply route too')
  const policies = await (await get(`${m}/policies`, auth)).json() as any
  const del = await fetch(`${m}/policies/${policies.items[0].id}`, { method: 'DELETE', headers: { ...auth, connection: 'close' } })
  t.equal(del.status, 409)
  t.equal(((await (await get(`${m}/auth/config`)).json()) as any).config_file, true, 'the console learns it is read-only')
  const creds = await (await get(`${m}/credentials`, auth)).json() as any
  t.equal(creds.items[0].config.token, '********', "the reference was resolved from the service's environment")

  // SIGHUP: the edited file, applied as a whole.
  const before = await get(`${m}/config`, auth)
  await writeFile(file, toYaml(gatewayFile(backend.url, [{ name: 'x', path: '/x' }, { name: 'y', path: '/y' }])))
  child.kill('SIGHUP')
  await waitFor(async () => (await get(`${g}/demo/y`)).status === 200, 'the reloaded file served').catch(err => { t.comment(log.slice(-3000)); throw err })
  const after = await get(`${m}/config`, auth)
  t.equal(Number(/\d+/.exec(after.headers.get('etag')!)![0]), Number(/\d+/.exec(before.headers.get('etag')!)![0]) + 1, 'one version for the reload')

  // A bad file on SIGHUP is logged; the running configuration stays.
  const bad = gatewayFile(backend.url, [{ name: 'z', path: '/z' }]) as any
  bad.collections[0].proxies.push({ name: 'broken', methods: ['GET'], path: 'no-slash' })
  await writeFile(file, toYaml(bad))
  child.kill('SIGHUP')
  await waitFor(async () => log.includes('CONFIG_FILE reload failed'), 'the failure logged')
  t.match(log, /no-slash|proxies\[1\]\.path/)
  t.equal((await get(`${g}/demo/y`)).status, 200, 'the running configuration stays')
  t.equal((await get(`${g}/demo/z`)).status, 404, 'nothing of the bad file was applied')
  t.equal(await (await get(`${m}/config`, auth)).text(), await after.text(), 'the configuration is unchanged')
  t.equal(child.exitCode, null, 'the service runs on')
})

t.test('a bad CONFIG_FILE stops the start with a line naming it', async t => {
  const dir = await createTempDir(t)
  const file = join(dir, 'gateway.json')
  await writeFile(file, JSON.stringify({ format_version: 1, policies: [{ name: 'gold', rate_limit: { requests: 0, per_seconds: 1 } }] }))
  const env = { ...process.env, DATA_DIR: join(dir, 'data'), PORT: String(await freePort()), HOST: '127.0.0.1', MANAGEMENT_PORT: String(await freePort()), LOG_LEVEL: 'silent', DATABASE_URL: '', CACHE_TYPE: 'memory', CONFIG_FILE: file }
  const child = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', d => { err += d })
  const code = await new Promise<number | null>(resolve => child.on('exit', c => resolve(c)))
  t.equal(code, 1)
  t.match(err, `CONFIG_FILE=${file} is invalid`)
  t.match(err, 'policies[0].rate_limit.requests')
})

t.test('an applied file is served by two instances on one PostgreSQL and one Redis', async t => {
  const url = await createTestDatabase(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: await createTempDir(t), CONFIG_POLL_INTERVAL_MS: '60000', SSE_PING_INTERVAL_MS: '200',
    SECRETS_KEY: 'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY='
  }), { logger: silentLogger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const backend = await startBackend(t)
  const token = await a.issueToken!('alice', 'admin')
  const viewer = await b.issueToken!('victor', 'viewer')

  // A subscriber on B hears the apply made on A.
  const ctrl = new AbortController()
  t.teardown(() => ctrl.abort())
  const stream = await fetch(`http://127.0.0.1:${b.managementPort}/api/v1/events/stream`, { headers: { authorization: `Bearer ${viewer}` }, signal: ctrl.signal })
  const reader = stream.body!.getReader()
  let sse = ''

  const file = gatewayFile(backend.url, [{ name: 'x', path: '/x' }, { name: 'y', path: '/y' }])
  file.credentials[0]!.config.token = 'resolved-by-the-caller'
  const res = await fetch(`http://127.0.0.1:${a.managementPort}/api/v1/config/apply`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(file)
  })
  t.equal(res.status, 200)
  t.equal(((await res.json()) as any).applied, true)
  // Served by both at once (B hears of the change through Redis; its store poll is a minute away).
  for (const [name, s] of [['A', a], ['B', b]] as const) {
    for (const p of ['/x', '/y']) {
      await waitFor(async () => (await get(`http://127.0.0.1:${s.gatewayPort}/demo${p}`)).status === 200, `instance ${name} serves ${p}`)
      t.equal(backend.seen.at(-1)!.url, p, `instance ${name} answers ${p} through the backend`)
    }
  }
  while (!(sse.includes('"resource_kind":"collection"') && sse.includes('"resource_kind":"proxy"'))) {
    const { value, done } = await reader.read()
    if (done) throw new Error('stream ended')
    sse += new TextDecoder().decode(value)
  }
  t.match(sse, /"operation":"created"/, "instance B's stream carries the apply's events")
})
