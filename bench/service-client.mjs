// Starts bench/service-server.mjs (the service as `npm start` runs it, plus `env`) and talks to it
// over fd 3: `ask(command)` answers the JSON line the server writes back (see service-server.mjs).
// Its stdout goes to <work>/<name>.log. runWrk loads a URL as every bench here does;
// createBenchDatabase makes a throwaway PostgreSQL database for a bench; ensureTools installs
// nginx and wrk when they are missing; startNginxBackend runs the benches' backend.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))

function have (cmd) { return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0 }

/**
 * An nginx backend on 127.0.0.1:`port` answering every request 200 with a 1 KiB JSON body (one
 * worker, no access log, unlimited keep-alive requests), its files in `work`; ready when resolved.
 */
export async function startNginxBackend (work, port) {
  const conf = path.join(work, 'backend.conf')
  fs.writeFileSync(conf, `worker_processes 1; daemon off; pid ${work}/nginx.pid; error_log ${work}/nginx.err;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; server { listen 127.0.0.1:${port};
  location / { default_type application/json; return 200 '${'x'.repeat(1024)}'; } } }\n`)
  const nginx = spawn('nginx', ['-c', conf, '-p', work], { stdio: 'inherit' })
  await new Promise(resolve => setTimeout(resolve, 500))
  return nginx
}

/** Installs nginx and wrk from Debian when missing (root, or sudo without a password). */
export function ensureTools () {
  const missing = ['nginx', 'wrk'].filter(c => !have(c))
  if (missing.length === 0) return
  console.log(`installing ${missing.join(', ')} from Debian (apt-get)`)
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n']
  if (sudo.length > 0 && !have('sudo')) throw new Error(`${missing.join(' and ')} missing: install them (apt-get install nginx wrk) and run again`)
  const run = (args) => execFileSync(sudo.length ? sudo[0] : args[0], sudo.length ? [...sudo.slice(1), ...args] : args.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  run(['apt-get', 'update', '-qq'])
  run(['apt-get', 'install', '-y', '-qq', 'nginx', 'wrk'])
}

/**
 * A service instance (bench/service-server.mjs) and its command channel. It runs one gateway
 * thread unless `env` sets GATEWAY_THREADS (the default, auto, is one per core): the benches
 * measure a request's cost on one event loop; bench/threads.mjs compares thread counts.
 */
export async function startBenchService (name, env, { work, backendPort, ...extra }) {
  env = { GATEWAY_THREADS: '1', ...env }
  const started = performance.now()
  const log = fs.openSync(path.join(work, `${name}.log`), 'w')
  const proc = spawn(process.execPath, [path.join(here, 'service-server.mjs'), JSON.stringify({ env, backendPort, ...extra })],
    { stdio: ['pipe', log, 'inherit', 'pipe'] })
  let buf = ''
  const waiting = []
  proc.stdio[3].setEncoding('utf8')
  proc.stdio[3].on('data', d => {
    buf += d
    let i
    while ((i = buf.indexOf('\n')) >= 0) { const line = buf.slice(0, i); buf = buf.slice(i + 1); waiting.shift()?.resolve(JSON.parse(line)) }
  })
  proc.on('exit', code => { for (const w of waiting.splice(0)) w.reject(new Error(`${name} exited (${code})`)) })
  const next = () => new Promise((resolve, reject) => waiting.push({ resolve, reject }))
  const first = await next()
  const ask = async (cmd) => { const p = next(); proc.stdin.write(cmd + '\n'); const r = await p; if (r.error) throw new Error(r.error); return r }
  const svc = { name, proc, ask, headers: first.headers, port: first.gateway_port, msToReady: Math.round(performance.now() - started) }
  svc.stop = async () => { if (proc.exitCode === null) { proc.kill('SIGTERM'); await new Promise(resolve => proc.on('exit', resolve)) } }
  return svc
}

/** A throwaway database on the local PostgreSQL (BENCH_DATABASE_URL): its URL and how to drop it. */
export async function createBenchDatabase (prefix) {
  const { default: pg } = await import('pg')
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const c = new pg.Client({ connectionString: admin }); await c.connect(); await c.query(`CREATE DATABASE ${name}`); await c.end()
  const url = new URL(admin); url.pathname = `/${name}`
  return { url: url.toString(), drop: async () => { const d = new pg.Client({ connectionString: admin }); await d.connect(); await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await d.end() } }
}

/**
 * The store part of an in-process bench service's environment: a throwaway PostgreSQL database
 * for `postgres`, a fresh DATA_DIR otherwise; `drop` removes the database (a no-op for the files).
 */
export async function benchStore (variant, name) {
  if (variant === 'postgres') {
    const db = await createBenchDatabase(`gh_${name}`)
    return { env: { DATABASE_URL: db.url }, drop: db.drop }
  }
  return { env: { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), `gh-${name}-`)) }, drop: async () => {} }
}

/** `wrk -t1 -c50 --latency` on `url`: req/s, requests, p50 and p99 in ms, non-2xx count. */
export function runWrk (url, { duration, headers = {}, script }) {
  const args = ['-t1', '-c50', `-d${duration}`, '--latency']
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`)
  if (script !== undefined) args.push('-s', script)
  args.push(url)
  const out = execFileSync('wrk', args, { encoding: 'utf8' })
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1])
  const requests = Number(/(\d+) requests in/.exec(out)[1])
  const lat = (p) => toMs(new RegExp(`\\s${p}%\\s+([\\d.]+\\w+)`).exec(out)[1])
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  return { rps, requests, p50: lat(50), p99: lat(99), non2xx: errors ? Number(errors[1]) : 0 }
}

function toMs (s) {
  const m = /^([\d.]+)(us|ms|s)$/.exec(s)
  const v = Number(m[1])
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v
}

/** CPU time in µs of every process named `postgres` (the server and its backends), from /proc. */
export function postgresCpuUs () {
  let ticks = 0
  for (const pid of fs.readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    let stat
    try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { continue }
    const close = stat.lastIndexOf(')')
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue
    const f = stat.slice(close + 2).split(' ')
    ticks += Number(f[11]) + Number(f[12])
  }
  return ticks * 10_000 // USER_HZ is 100 on Linux
}
