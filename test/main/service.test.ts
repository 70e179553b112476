/**
 * The whole service as a user meets it: the compiled entry point with the
 * embedded store, and two in-process instances sharing PostgreSQL and Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import t from 'tap'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../helpers/db.js'
import { startBackend } from '../helpers/gateway.js'
import { freePort } from '../helpers/ports.js'
import { TEST_REDIS_URL } from '../helpers/services.js'

const ENTRY = new URL('../../dist/src/main/index.js', import.meta.url).pathname
const TOKEN_CLI = new URL('../../dist/src/main/cli/token.js', import.meta.url).pathname

// Generous: a first start creates the embedded store, which is slow on a loaded machine.
async function waitFor (fn: () => Promise<boolean>, what: string, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await fn().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function api (base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

t.test('npm start: the compiled service with embedded defaults, walked through as in the README', async t => {
  const dataDir = await createTempDir(t)
  const [gwPort, mgPort] = [await freePort(), await freePort()]
  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(gwPort), HOST: '127.0.0.1', MANAGEMENT_PORT: String(mgPort), LOG_LEVEL: 'info', DATABASE_URL: '', CACHE_TYPE: 'memory', TEAM_SECRET: 's3cret' }
  const child: ChildProcess = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout!.on('data', d => { log += d })
  child.stderr!.on('data', d => { log += d })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  t.teardown(() => { child.kill('SIGKILL') })
  await waitFor(async () => log.includes('management tokens come from the built-in local issuer'), 'start-up log')
  t.match(log, `gateway listening on http://127.0.0.1:${gwPort}`)
  t.match(log, `management API listening on http://127.0.0.1:${mgPort}/api/v1`)
  t.match(log, 'npm run token -- --sub alice --role admin')

  const token = await new Promise<string>((resolve, reject) => {
    const p = spawn(process.execPath, [TOKEN_CLI, '--sub', 'alice', '--role', 'admin'], { env })
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.on('exit', code => code === 0 ? resolve(out.trim()) : reject(new Error(`token exited ${code}`)))
  })
  let release: () => void = () => {}
  const backend = await startBackend(t, (req, res) => {
    if (req.url!.startsWith('/hold')) { release = () => res.end('finished'); return }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ url: req.url, team: req.headers['x-team'], secret: req.headers['x-secret'] }))
  })
  const m = `http://127.0.0.1:${mgPort}/api/v1`
  const c = await api(m, token, 'POST', '/collections', {
    name: 'demo', base_path: '/demo', upstream_url: backend.url, auth_required: false,
    headers: [{ name: 'x-team', value: 'payments' }, { name: 'x-secret', env: 'TEAM_SECRET' }]
  })
  t.equal(c.status, 201)
  const p = await api(m, token, 'POST', '/proxies', { collection_id: c.body.id, name: 'files', methods: ['GET'], path: '/files/{name}', target_path: '/{name}' })
  t.equal(p.status, 201)
  const hold = await api(m, token, 'POST', '/proxies', { collection_id: c.body.id, name: 'hold', methods: ['GET'], path: '/hold', target_path: '/hold', status: 'published' })
  t.equal(hold.status, 201)
  const g = `http://127.0.0.1:${gwPort}`
  t.equal((await fetch(`${g}/demo/files/readme?x=1`)).status, 404, 'a draft is not reachable')
  t.equal((await api(m, token, 'PUT', `/proxies/${p.body.id}`, { status: 'published' })).status, 200)
  let res = await fetch(`${g}/demo/files/readme?x=1`, { headers: { connection: 'close' } })
  t.equal(res.status, 200, 'published: reachable at once')
  t.same(await res.json(), { url: '/readme?x=1', team: 'payments', secret: 's3cret' })
  await api(m, token, 'PUT', `/proxies/${p.body.id}`, { status: 'draft' })
  t.equal((await fetch(`${g}/demo/files/readme`, { headers: { connection: 'close' } })).status, 404, 'unpublished: gone at once')
  await api(m, token, 'PUT', `/proxies/${p.body.id}`, { status: 'published' })
  await api(m, token, 'PUT', `/collections/${c.body.id}/status`, { status: 'disabled' })
  t.equal((await fetch(`${g}/demo/files/readme`, { headers: { connection: 'close' } })).status, 404, 'collection disabled: gone')
  await api(m, token, 'PUT', `/collections/${c.body.id}/status`, { status: 'active' })
  t.equal((await fetch(`${g}/demo/files/readme`, { headers: { connection: 'close' } })).status, 200, 'enabled again')

  // SIGTERM while a request is in flight: it finishes, then the process exits 0.
  const inflight = fetch(`${g}/demo/hold`, { headers: { connection: 'close' } })
  await waitFor(async () => backend.seen.some(s => s.url === '/hold'), 'in-flight request')
  child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 200))
  release()
  res = await inflight
  t.equal(await res.text(), 'finished', 'the in-flight request completed during shutdown')
  t.equal(await exited, 0, 'exit code 0 after SIGTERM')
})

t.test('a bad setting stops the start with one line naming it', async t => {
  const out = await new Promise<{ code: number | null, err: string }>(resolve => {
    const p = spawn(process.execPath, [ENTRY], { env: { ...process.env, MANAGEMENT_PORT: 'eighty' } })
    let err = ''
    p.stderr.on('data', d => { err += d })
    p.on('exit', code => resolve({ code, err }))
  })
  t.equal(out.code, 1)
  t.equal(out.err.trim().split('\n').length, 1)
  t.match(out.err, /MANAGEMENT_PORT="eighty" is invalid/)
})

t.test('two instances on one PostgreSQL and one Redis', async t => {
  const url = await createTestDatabase(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const mk = async () => {
    const config = loadConfig({
      GATEWAY_THREADS: '1',
      DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
      DATA_DIR: await createTempDir(t), CONFIG_POLL_INTERVAL_MS: '100', SSE_PING_INTERVAL_MS: '200'
    })
    return await start(config, { logger: silentLogger, keyPrefix: prefix })
  }
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const backend = await startBackend(t)
  const tokenA = await a.issueToken!('alice', 'admin')
  const tokenB = await b.issueToken!('bob', 'viewer')

  // A subscriber on B.
  const ctrl = new AbortController()
  t.teardown(() => ctrl.abort())
  const stream = await fetch(`http://127.0.0.1:${b.managementPort}/api/v1/events/stream`, { headers: { authorization: `Bearer ${tokenB}` }, signal: ctrl.signal })
  t.equal(stream.status, 200)
  t.match(stream.headers.get('content-type'), /^text\/event-stream/)
  const reader = stream.body!.getReader()
  let sse = ''
  const readUntil = async (pred: (s: string) => boolean) => {
    while (!pred(sse)) {
      const { value, done } = await reader.read()
      if (done) throw new Error('stream ended')
      sse += new TextDecoder().decode(value)
    }
  }

  const m = `http://127.0.0.1:${a.managementPort}/api/v1`
  const c = await api(m, tokenA, 'POST', '/collections', { name: 'shared', base_path: '/shared', upstream_url: backend.url, auth_required: false })
  t.equal(c.status, 201)
  await readUntil(s => s.includes(c.body.id))
  const line = sse.split('\n').find(l => l.startsWith('data:') && l.includes(c.body.id))!
  const ev = JSON.parse(line.slice(5))
  t.match(ev, { schema_version: 1, resource_kind: 'collection', collection_id: c.body.id, operation: 'created', actor_sub: 'alice' })
  t.type(ev.occurred_at_unix, 'number')

  const p = await api(m, tokenA, 'POST', '/proxies', { collection_id: c.body.id, name: 'x', methods: ['GET'], path: '/x', target_path: '/y', status: 'published' })
  t.equal(p.status, 201)
  // Instance B serves the new route after its next poll of the store.
  await waitFor(async () => (await fetch(`http://127.0.0.1:${b.gatewayPort}/shared/x`, { headers: { connection: 'close' } })).status === 200, 'route on instance B')
  t.equal(backend.seen.at(-1)!.url, '/y')
})

t.test('/readyz reports 503 on both listeners while PostgreSQL is unreachable; nothing crashes', async t => {
  const url = await createTestDatabase(t)
  const config = loadConfig({ GATEWAY_THREADS: '1', DATABASE_URL: url, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: await createTempDir(t), DB_QUERY_TIMEOUT_MS: '2000' })
  const s = await start(config, { logger: silentLogger })
  t.teardown(() => s.close())
  const probe = async (port: number, path: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { connection: 'close' } })
    return { status: r.status, body: await r.json() as any }
  }
  t.equal((await probe(s.gatewayPort, '/readyz')).status, 200)
  // Take the database away under the running service.
  const pg = (await import('pg')).default
  const admin = new pg.Client({ connectionString: url.replace(/\/[^/]+$/, '/test') })
  await admin.connect()
  await admin.query(`DROP DATABASE ${new URL(url).pathname.slice(1)} WITH (FORCE)`)
  await admin.end()
  for (const port of [s.gatewayPort, s.managementPort]) {
    const r = await probe(port, '/readyz')
    t.equal(r.status, 503)
    t.equal(r.body.status, 'not_ready')
    t.match(r.body.checks.database, /unreachable/)
    t.equal((await probe(port, '/livez')).status, 200, 'still alive')
  }
  const token = await s.issueToken!('alice', 'admin')
  const r = await api(`http://127.0.0.1:${s.managementPort}/api/v1`, token, 'GET', '/collections')
  t.equal(r.status, 503, 'a request needing the database fails cleanly')
  t.equal(r.body.error.code, 'service_unavailable')
})

t.test('SIGTERM with an open event stream: the stream ends at once and the process exits without waiting out SHUTDOWN_TIMEOUT_MS', async t => {
  const dataDir = await createTempDir(t)
  const [gwPort, mgPort] = [await freePort(), await freePort()]
  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(gwPort), HOST: '127.0.0.1', MANAGEMENT_PORT: String(mgPort), LOG_LEVEL: 'info', DATABASE_URL: '', CACHE_TYPE: 'memory', SHUTDOWN_TIMEOUT_MS: '60000' }
  const child: ChildProcess = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout!.on('data', d => { log += d })
  child.stderr!.on('data', d => { log += d })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  t.teardown(() => { child.kill('SIGKILL') })
  await waitFor(async () => log.includes('management tokens come from the built-in local issuer'), 'start-up log')
  const token = await new Promise<string>((resolve, reject) => {
    const p = spawn(process.execPath, [TOKEN_CLI, '--sub', 'alice', '--role', 'viewer'], { env })
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.on('exit', code => code === 0 ? resolve(out.trim()) : reject(new Error(`token exited ${code}`)))
  })
  const stream = await fetch(`http://127.0.0.1:${mgPort}/api/v1/events/stream`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(stream.status, 200)
  const reader = stream.body!.getReader()
  await reader.read()
  const ended = (async () => { for (;;) { const { done } = await reader.read().catch(() => ({ done: true })); if (done) return true } })()
  const sent = Date.now()
  child.kill('SIGTERM')
  t.equal(await ended, true, 'the client sees its stream end (and would reconnect elsewhere with Last-Event-ID)')
  t.equal(await exited, 0, 'exit code 0')
  t.ok(Date.now() - sent < 30_000, 'the exit did not wait for the 60 s shutdown timeout')
})
