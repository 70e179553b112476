// Upstreams: (A) what a balanced collection costs per request against a one-URL collection, in one
// run, alternating; (B) requests lost while one of three targets is killed under load, with and
// without retries. The gateway runs in this process (its CPU is this process's during wrk); nginx
// backends `return 200` (1 KiB) on 127.0.0.2-4, one process each (master_process off, so SIGKILL
// kills the target outright). Needs `npm run build`, nginx and wrk. Prints a Markdown block for
// bench/RESULTS.md.
//   node bench/upstreams.mjs            # BENCH_ROUNDS=3 BENCH_DURATION=6s
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../dist/src/main/config/config.js'
import { createGateway } from '../dist/src/main/gateway/index.js'
import { createLogger } from '../dist/src/main/logger.js'
import { mergeUpstream } from '../dist/src/common/upstream-settings.js'
import { ensureTools } from './service-client.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = process.env.BENCH_DURATION ?? '6s'
const PORT = 18300 + Math.floor(Math.random() * 500)
ensureTools()
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-upstreams-'))

function nginx (host, workers = 1) {
  const dir = path.join(work, host)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'n.conf'), `${workers === 1 ? 'master_process off;' : `worker_processes ${workers};`} daemon off; pid ${dir}/nginx.pid; error_log ${dir}/err;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; server { listen ${host}:${PORT};
  location / { default_type application/json; return 200 '${'x'.repeat(1024)}'; } } }\n`)
  return spawn('nginx', ['-c', path.join(dir, 'n.conf'), '-p', dir], { stdio: 'inherit' })
}
const hosts = ['127.0.0.2', '127.0.0.3', '127.0.0.4']
const backends = hosts.map(h => nginx(h))
// The one-URL collection's backend: as many nginx workers as the three targets have between them.
const single = nginx('127.0.0.5', 3)
await new Promise(resolve => setTimeout(resolve, 600))

const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', SHED_EVENT_LOOP_DELAY_MS: '0' })
const gateway = createGateway({ config, logger: createLogger(config), readiness: async () => ({ ok: true, checks: {} }) })
const now = new Date().toISOString()
const col = (id, base, upstream) => ({ id, name: id, description: '', base_path: base, upstream, upstream_url: upstream.targets.length === 1 ? upstream.targets[0].url : undefined, status: 'active', headers: [], auth_required: false, cors: null, version: 1, created_at: now, updated_at: now })
const prx = (c) => ({
  id: `${c.id}-p`, collection_id: c.id, name: 'items', description: '', methods: ['GET'], path: '/items/{id}', target_path: '/items/{id}', headers: [], parameters: [],
  request_schema: null, response_schema: null, streaming: false, status: 'published', workflow_enabled: false, workflow: null, workflow_id: `${c.id}-w`,
  timeout_ms: null, max_body_bytes: null, cache: null, compression: false, apply_parameter_defaults: false, websocket: false, version: 1, created_at: now, updated_at: now
})
const targets = hosts.map(h => ({ url: `http://${h}:${PORT}` }))
const one = col('one', '/one', mergeUpstream(null, { targets: [{ url: `http://127.0.0.5:${PORT}` }] }, undefined))
const three = col('three', '/three', mergeUpstream(null, { targets }, undefined))
const retrying = col('retrying', '/retrying', mergeUpstream(null, { targets, retries: { attempts: 2, budget_percent: 20 } }, undefined))
const plain = col('plain', '/plain', mergeUpstream(null, { targets }, undefined))
const cols = [one, three, retrying, plain]
gateway.setRoutes(cols, cols.map(prx))
const { port } = await gateway.listen()

function wrk (url, duration) {
  const out = execFileSync('wrk', ['-t1', '-c50', `-d${duration}`, '--latency', url], { encoding: 'utf8' })
  const num = (re) => Number(re.exec(out)?.[1] ?? 0)
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/), requests: num(/(\d+) requests in/), non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    socketErrors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0, p99: /\s99%\s+([\d.]+\w+)/.exec(out)?.[1]
  }
}
/** wrk in a child, so this process (the gateway) keeps its event loop; resolves with its result. */
function wrkAsync (url, duration) {
  return new Promise((resolve, reject) => {
    const p = spawn('wrk', ['-t1', '-c50', `-d${duration}`, '--latency', url])
    let out = ''
    p.stdout.on('data', d => { out += d })
    p.on('exit', code => {
      if (code !== 0) { reject(new Error(`wrk exited ${code}`)); return }
      const num = (re) => Number(re.exec(out)?.[1] ?? 0)
      const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
      resolve({ rps: num(/Requests\/sec:\s+([\d.]+)/), requests: num(/(\d+) requests in/), non2xx: num(/Non-2xx or 3xx responses: (\d+)/), socketErrors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0 })
    })
  })
}
void wrk

// (A) cost per request: one URL against three balanced targets, alternating.
const a = { one: [], three: [] }
for (let r = 0; r < ROUNDS; r++) {
  for (const name of r % 2 === 0 ? ['one', 'three'] : ['three', 'one']) {
    const cpu0 = process.cpuUsage()
    const res = await wrkAsync(`http://127.0.0.1:${port}/${name}/items/1`, DURATION)
    const cpu = process.cpuUsage(cpu0)
    a[name].push({ ...res, cpuUs: (cpu.user + cpu.system) / res.requests })
  }
}
const median = xs => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] }

// (B) one of three targets killed (SIGKILL) a third into the run, then started again; GETs lost.
async function killRun (name) {
  const run = wrkAsync(`http://127.0.0.1:${port}/${name}/items/1`, '9s')
  await new Promise(resolve => setTimeout(resolve, 3000))
  backends[1].kill('SIGKILL')
  await new Promise(resolve => setTimeout(resolve, 3000))
  backends[1] = nginx(hosts[1]) // same address and port again
  const res = await run
  return res
}
fs.rmSync(path.join(work, hosts[1]), { recursive: true, force: true })
const b = {}
for (const name of ['retrying', 'plain']) {
  b[name] = await killRun(name)
  fs.rmSync(path.join(work, hosts[1]), { recursive: true, force: true })
  await new Promise(resolve => setTimeout(resolve, 1000))
}

const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const uptime = execFileSync('uptime', { encoding: 'utf8' }).trim()
console.log(`
## Upstreams (bench/upstreams.mjs)

Command: \`node bench/upstreams.mjs\` (BENCH_ROUNDS=${ROUNDS}, BENCH_DURATION=${DURATION}); ${new Date().toISOString()}, ${os.cpus().length} cores, Node ${process.version}.
\`uptime\` at the end: ${uptime} (load ${load}).
The gateway alone in the bench process (no store, no logs); wrk -t1 -c50; nginx \`return 200\` (1 KiB) backends: one process per target address (127.0.0.2-4), and for the one-URL collection one nginx with 3 workers (127.0.0.5), so both sides have the same backend capacity.

(A) Cost per request, alternating rounds (one URL = the direct path; three targets = round robin over 127.0.0.2-4):

| Collection | req/s (median) | CPU µs/req (median) | rounds req/s | rounds CPU µs/req |
|---|---:|---:|---|---|
| one URL | ${median(a.one.map(x => x.rps)).toFixed(0)} | ${median(a.one.map(x => x.cpuUs)).toFixed(1)} | ${a.one.map(x => x.rps.toFixed(0)).join(', ')} | ${a.one.map(x => x.cpuUs.toFixed(1)).join(', ')} |
| three targets | ${median(a.three.map(x => x.rps)).toFixed(0)} | ${median(a.three.map(x => x.cpuUs)).toFixed(1)} | ${a.three.map(x => x.rps.toFixed(0)).join(', ')} | ${a.three.map(x => x.cpuUs.toFixed(1)).join(', ')} |

(B) One of three targets killed with SIGKILL 3 s into a 9 s run of GETs (50 connections), started again 3 s later:

| Collection | requests | non-2xx | socket errors | lost |
|---|---:|---:|---:|---:|
| retries.attempts 2 | ${b.retrying.requests} | ${b.retrying.non2xx} | ${b.retrying.socketErrors} | ${b.retrying.non2xx + b.retrying.socketErrors} |
| no retries | ${b.plain.requests} | ${b.plain.non2xx} | ${b.plain.socketErrors} | ${b.plain.non2xx + b.plain.socketErrors} |
`)
await gateway.close()
for (const p of backends) p.kill('SIGKILL')
single.kill('SIGTERM')
fs.rmSync(work, { recursive: true, force: true })
process.exit(0)
