#!/usr/bin/env node
/**
 * Throwaway PostgreSQL and Redis for the test suite, touching no system
 * configuration: a PostgreSQL cluster made with `initdb` in a temporary
 * directory and a `redis-server` without persistence, each on a free loopback
 * port, both removed when this process ends.
 *
 *   tap runner ──before──▶ tap-before.mjs ──spawns (detached)──▶ test-servers.mjs --watch <runner pid>
 *        │                                                        │ starts postgres + redis
 *        │                       state file <tmp>/gatehouse-test-services-<runner pid>.json
 *        ├──test files read the URLs from the state file (test/helpers/services.ts)
 *        └──after──▶ tap-after.mjs ── SIGTERM ──▶ stops both, removes the directory
 *
 * The supervisor also stops everything when the runner it watches is gone
 * (Ctrl-C, crash), so no server outlives its test run.
 *
 * Standalone, for running many test files by hand against one pair of servers:
 *   node scripts/test-servers.mjs        prints the TEST_DATABASE_URL / TEST_REDIS_URL
 *                                        to export, and holds the servers until Ctrl-C.
 * Options: --watch PID, --state FILE, --no-postgres, --no-redis.
 */
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const HOST = '127.0.0.1'
const args = process.argv.slice(2)
const opt = name => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined }
const watchPid = opt('--watch') === undefined ? undefined : Number(opt('--watch'))
const stateFile = opt('--state')
const wantPostgres = !args.includes('--no-postgres')
const wantRedis = !args.includes('--no-redis')

const log = msg => process.stderr.write(`[test-servers] ${msg}\n`)

async function freePort () {
  const srv = net.createServer()
  await new Promise((resolve, reject) => { srv.once('error', reject); srv.listen(0, HOST, resolve) })
  const { port } = srv.address()
  await new Promise(resolve => srv.close(resolve))
  return port
}

function which (cmd) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, cmd)
    try { fs.accessSync(p, fs.constants.X_OK); return p } catch {}
  }
  return undefined
}

/** initdb and postgres: on PATH, else Debian's newest /usr/lib/postgresql/<version>/bin. */
function pgBinDir () {
  const onPath = which('initdb')
  if (onPath !== undefined) return path.dirname(fs.realpathSync(onPath))
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter(v => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (fs.existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin')
  throw new Error('PostgreSQL server binaries (initdb, postgres) not found: install them (Debian: apt-get install postgresql), or set TEST_DATABASE_URL')
}

/** PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user (or `nobody`). */
function serverUser () {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim())
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim())
      return { uid, gid }
    } catch {}
  }
  throw new Error('running as root, and neither a `postgres` nor a `nobody` user exists to own the test cluster')
}

function waitExit (child, ms) {
  return new Promise(resolve => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), ms)
    child.once('exit', () => { clearTimeout(timer); resolve(true) })
  })
}

function outputOf (child) {
  let out = ''
  child.stdout?.on('data', b => { out += b })
  child.stderr?.on('data', b => { out += b })
  return () => out.slice(-4000)
}

async function run (cmd, argv, opts) {
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...opts })
  const out = outputOf(child)
  const code = await new Promise((resolve, reject) => { child.once('error', reject); child.once('exit', resolve) })
  if (code !== 0) throw new Error(`${path.basename(cmd)} failed (${code}): ${out()}`)
}

/**
 * initdb costs seconds; a cluster copied from a template made once per
 * PostgreSQL version (and owner) costs a fraction of one.
 */
async function clusterTemplate (bin, user) {
  const version = execFileSync(path.join(bin, 'initdb'), ['--version'], { encoding: 'utf8' }).trim().replace(/[^\w.]+/g, '_')
  const template = path.join(os.tmpdir(), `gatehouse-pg-template-${version}-${user?.uid ?? process.getuid?.() ?? 'x'}`)
  if (fs.existsSync(path.join(template, 'PG_VERSION'))) return template
  const building = `${template}.${process.pid}`
  fs.mkdirSync(building, { mode: 0o700 })
  if (user !== undefined) fs.chownSync(building, user.uid, user.gid)
  await run(path.join(bin, 'initdb'), ['-D', building, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'],
    user === undefined ? {} : { uid: user.uid, gid: user.gid })
  try { fs.renameSync(building, template) } catch { fs.rmSync(building, { recursive: true, force: true }) } // another run made it first
  return template
}

async function pgReady (port) {
  const pg = (await import('pg')).default
  const c = new pg.Client({ host: HOST, port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 1000 })
  try { await c.connect(); await c.query('SELECT 1'); return c } catch { await c.end().catch(() => {}); return undefined }
}

async function startPostgres (dir) {
  const bin = pgBinDir()
  const user = serverUser()
  const data = path.join(dir, 'pg')
  const sockets = path.join(dir, 'pg-sockets')
  fs.mkdirSync(sockets)
  await run('cp', ['-a', await clusterTemplate(bin, user), data])
  if (user !== undefined) {
    fs.chownSync(dir, user.uid, user.gid)
    fs.chownSync(sockets, user.uid, user.gid)
  }
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = spawn(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', sockets,
      '-c', `listen_addresses=${HOST}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
      '-c', 'max_connections=300', '-c', 'shared_buffers=32MB'], { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) })
    const out = outputOf(child)
    const deadline = Date.now() + 30_000
    let client
    while (client === undefined && child.exitCode === null && Date.now() < deadline) {
      client = await pgReady(port)
      if (client === undefined) await sleep(100)
    }
    if (client !== undefined) {
      await client.query('CREATE DATABASE test')
      await client.end()
      return { url: `postgres://postgres@${HOST}:${port}/test`, child, stop: () => stopChild(child, 'SIGINT') }
    }
    await stopChild(child, 'SIGQUIT')
    if (attempt >= 3) throw new Error('PostgreSQL did not start: ' + out())
  }
}

async function redisReady (port) {
  return await new Promise(resolve => {
    const sock = net.connect(port, HOST)
    sock.setTimeout(1000)
    sock.once('data', b => { sock.destroy(); resolve(b.toString().startsWith('+PONG')) })
    sock.once('connect', () => sock.write('PING\r\n'))
    sock.once('error', () => resolve(false))
    sock.once('timeout', () => { sock.destroy(); resolve(false) })
  })
}

async function startRedis (dir) {
  if (which('redis-server') === undefined) throw new Error('redis-server not found: install it (Debian: apt-get install redis-server), or set TEST_REDIS_URL')
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = spawn('redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir,
      '--maxclients', '2000'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const out = outputOf(child)
    const deadline = Date.now() + 10_000
    let up = false
    while (!up && child.exitCode === null && Date.now() < deadline) {
      up = await redisReady(port)
      if (!up) await sleep(50)
    }
    if (up) return { url: `redis://${HOST}:${port}`, child, stop: () => stopChild(child, 'SIGTERM') }
    await stopChild(child, 'SIGKILL')
    if (attempt >= 3) throw new Error('Redis did not start: ' + out())
  }
}

async function stopChild (child, signal) {
  child.kill(signal)
  if (!await waitExit(child, 10_000)) { child.kill('SIGKILL'); await waitExit(child, 5000) }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-services-'))
fs.chmodSync(dir, 0o755)
const running = []
let stopping
function stopAll (code) {
  stopping ??= (async () => {
    await Promise.all(running.map(s => s.stop().catch(() => {})))
    fs.rmSync(dir, { recursive: true, force: true })
    if (stateFile !== undefined) fs.rmSync(stateFile, { force: true })
    process.exit(code)
  })()
  return stopping
}
process.on('SIGTERM', () => { void stopAll(0) })
process.on('SIGINT', () => { void stopAll(0) })
process.on('SIGHUP', () => { void stopAll(0) })

try {
  const [pgServer, redisServer] = await Promise.all([
    wantPostgres ? startPostgres(dir).then(s => { running.push(s); return s }) : undefined,
    wantRedis ? startRedis(dir).then(s => { running.push(s); return s }) : undefined
  ])
  for (const s of running) s.child.once('exit', () => { if (stopping === undefined) { log('a test server exited unexpectedly'); void stopAll(1) } })
  const state = { pid: process.pid, databaseUrl: pgServer?.url, redisUrl: redisServer?.url }
  if (stateFile !== undefined) {
    fs.writeFileSync(`${stateFile}.tmp`, JSON.stringify(state))
    fs.renameSync(`${stateFile}.tmp`, stateFile) // readers never see half a file
  } else {
    if (state.databaseUrl !== undefined) process.stdout.write(`export TEST_DATABASE_URL=${state.databaseUrl}\n`)
    if (state.redisUrl !== undefined) process.stdout.write(`export TEST_REDIS_URL=${state.redisUrl}\n`)
    log('running; Ctrl-C stops both and removes their data')
  }
} catch (err) {
  log(err instanceof Error ? err.message : String(err))
  await stopAll(1)
}

if (watchPid !== undefined) {
  const timer = setInterval(() => {
    try { process.kill(watchPid, 0) } catch { clearInterval(timer); void stopAll(0) }
  }, 500)
}
