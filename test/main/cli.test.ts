/** The `gatehouse` command as a user runs it: help, version, token (valid for the server with the same DATA_DIR), its sign-in link's address, errors without stack traces. */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import t from 'tap'
import { createAuth } from '../../src/main/auth/verifier.js'
import { loadConfig } from '../../src/main/config/config.js'
import { start } from '../../src/main/server.js'
import { createTempDir, silentLogger } from '../helpers/db.js'

const BIN = new URL('../../bin/gatehouse.mjs', import.meta.url).pathname
const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version as string
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, OIDC_ISSUER: '', OIDC_JWKS_URL: '', ...env }, encoding: 'utf8', timeout: 120_000 })

t.test('help and version', async t => {
  for (const args of [['--help'], [], ['help']]) {
    const r = run(args)
    t.equal(r.status, 0)
    t.match(r.stdout, /gatehouse start[\s\S]*gatehouse token[\s\S]*--version/)
  }
  t.equal(run(['--version']).stdout.trim(), version)
  const tokenHelp = run(['token', '--help'])
  t.equal(tokenHelp.status, 0)
  t.match(tokenHelp.stdout, /--sub <subject>[\s\S]*same DATA_DIR/)
  const startHelp = run(['start', '--help'])
  t.equal(startHelp.status, 0)
  t.match(startHelp.stdout, /MANAGEMENT_PORT/)
})

t.test('mistakes get a message and the usage, never a stack trace', async t => {
  const unknown = run(['frobnicate'])
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, /unknown command 'frobnicate'/)
  const bad = run(['token', '--bogus'])
  t.equal(bad.status, 1)
  t.match(bad.stderr, /Unknown option '--bogus'[\s\S]*usage:/)
  t.notMatch(bad.stderr, /at .*\.js:\d+/)
  const noSub = run(['token'], { DATA_DIR: await createTempDir(t) })
  t.equal(noSub.status, 1)
  t.match(noSub.stderr, /--sub is required/)
  const badRole = run(['token', '--sub', 'a', '--role', 'root'], { DATA_DIR: await createTempDir(t) })
  t.match(badRole.stderr, /--role must be viewer, editor or admin/)
})

t.test('a token made with the server DATA_DIR is accepted; one made elsewhere is refused saying why', async t => {
  const dataDir = await createTempDir(t)
  const r = run(['token', '--sub', 'alice', '--role', 'editor'], { DATA_DIR: dataDir })
  t.equal(r.status, 0, r.stderr)
  const auth = await createAuth(loadConfig({ DATA_DIR: dataDir }), silentLogger)
  t.match(await auth.verify(`Bearer ${r.stdout.trim()}`), { sub: 'alice', role: 'editor' })
  const other = run(['token', '--sub', 'alice'], { DATA_DIR: await createTempDir(t) })
  await t.rejects(auth.verify(`Bearer ${other.stdout.trim()}`), { status: 401, message: /signed by a key this service does not know/ })
  const url = run(['token', '--sub', 'alice', '--url'], { DATA_DIR: dataDir, MANAGEMENT_PORT: '9181' })
  t.match(url.stdout.trim(), /^http:\/\/127\.0\.0\.1:9181\/#access_token=ey/)
})

t.test('the sign-in link points at the server running with the same DATA_DIR, or where --port / --url-base say', async t => {
  const dataDir = await createTempDir(t)
  const link = (args: string[], env: Record<string, string> = {}) => {
    const r = run(['token', '--sub', 'alice', ...args], { DATA_DIR: dataDir, MANAGEMENT_HOST: '127.0.0.1', MANAGEMENT_PORT: '8081', ...env })
    t.equal(r.status, 0, r.stderr)
    return { url: r.stdout.trim(), note: r.stderr }
  }
  // No server: the environment's port, as before.
  t.match(link(['--url']).url, /^http:\/\/127\.0\.0\.1:8081\/#access_token=ey/)

  const svc = await start(loadConfig({ GATEWAY_THREADS: '1', DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1' }), { logger: silentLogger })
  let closed = false
  t.teardown(async () => { if (!closed) await svc.close() })
  const running = link(['--url'])
  t.match(running.url, new RegExp(`^http://127\\.0\\.0\\.1:${svc.managementPort}/#access_token=ey`), 'the running server\'s port, not MANAGEMENT_PORT=8081 from the environment')
  t.match(running.note, /server running with this DATA_DIR, pid \d+/, 'and it says where the port came from')
  const token = running.url.split('#access_token=')[1]!
  const me = await fetch(`http://127.0.0.1:${svc.managementPort}/api/v1/collections`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })
  t.equal(me.status, 200, 'the link\'s token signs in there')

  t.match(link(['--url', '--port', '9300']).url, /^http:\/\/127\.0\.0\.1:9300\/#access_token=ey/, '--port wins')
  t.match(link(['--url-base', 'https://gw.example.com/console/']).url, /^https:\/\/gw\.example\.com\/console\/#access_token=ey/, '--url-base wins (and implies --url)')
  const bad = run(['token', '--sub', 'alice', '--port', 'x'], { DATA_DIR: dataDir })
  t.equal(bad.status, 1)
  t.match(bad.stderr, /--port must be a port number/)
  t.match(run(['token', '--sub', 'alice', '--url-base', 'ftp://x'], { DATA_DIR: dataDir }).stderr, /--url-base must be an http:\/\/ or https:\/\/ URL/)

  await svc.close()
  closed = true
  t.match(link(['--url']).url, /^http:\/\/127\.0\.0\.1:8081\//, 'once the server has stopped, the environment again')
})
