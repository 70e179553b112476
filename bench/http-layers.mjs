/**
 * The gateway's two HTTP layers side by side against nginx, in one run, so users can choose
 * GATEWAY_SERVER with numbers: `node bench/http-layers.mjs` (after npm run build).
 *
 *   wrk ──> nginx proxy ─────────────────────┐
 *   wrk ──> gateway (GATEWAY_SERVER=uws) ────┼──> nginx backend (return 200, 1 KiB JSON)
 *   wrk ──> gateway (GATEWAY_SERVER=node) ───┘
 *
 * Each gateway is bench/gateway-server.mjs (one published proxy, no store, no logs of requests).
 * Per round, every contender once, the order rotating: `wrk -t1 -c50` GET for req/s and the CPU
 * the contender's processes spent per request (/proc, utime + stime); then the same load paced
 * (each connection waits PACE_MS after every answer: equal offered load) for p50/p99. Medians.
 * ROUNDS (default 3) and DURATION (default 5s) from the environment.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, runWrk, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const DURATION = process.env.DURATION ?? '5s'
const PACE_MS = 10
const PORTS = { backend: 18911, nginx: 18912, uws: 18913, node: 18914 }
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-http-layers-'))
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }

/** CPU µs of a process and its children (nginx's master and worker), from /proc. */
function cpuUs (root) {
  let ticks = 0
  for (const pid of fs.readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    let stat
    try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { continue }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(pid) !== root && Number(f[1]) !== root) continue
    ticks += Number(f[11]) + Number(f[12])
  }
  return ticks * 10_000 // USER_HZ is 100 on Linux
}

function nginxProxy () {
  const dir = path.join(work, 'proxy')
  fs.mkdirSync(dir)
  const conf = path.join(dir, 'nginx.conf')
  fs.writeFileSync(conf, `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/err.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000;
  client_body_temp_path ${dir}/b; proxy_temp_path ${dir}/p; fastcgi_temp_path ${dir}/f; uwsgi_temp_path ${dir}/u; scgi_temp_path ${dir}/s;
  upstream backend { server 127.0.0.1:${PORTS.backend}; keepalive 128; }
  server { listen 127.0.0.1:${PORTS.nginx};
    location /api/ { proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header X-Team bench;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; } } }\n`)
  return spawn('nginx', ['-c', conf, '-p', dir], { stdio: 'inherit' })
}

async function startGateway (server) {
  const p = spawn(process.execPath, [path.join(here, 'gateway-server.mjs'), String(PORTS[server]), String(PORTS.backend)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, GATEWAY_SERVER: server } })
  await new Promise((resolve, reject) => { p.stdout.on('data', d => { if (String(d).includes('ready')) resolve() }); p.on('exit', code => reject(new Error(`gateway (${server}) exited ${code}`))) })
  return p
}

async function main () {
  ensureTools()
  fs.writeFileSync(path.join(work, 'paced.lua'), `function delay() return ${PACE_MS} end\n`)
  fs.mkdirSync(path.join(work, 'backend'))
  const procs = [await startNginxBackend(path.join(work, 'backend'), PORTS.backend), nginxProxy()]
  const cleanup = () => { for (const p of procs) try { p.kill('SIGTERM') } catch {} }
  process.on('exit', cleanup)
  try {
    procs.push(await startGateway('uws'), await startGateway('node'))
    const pids = { nginx: procs[1].pid, uws: procs[2].pid, node: procs[3].pid }
    await new Promise(resolve => setTimeout(resolve, 500))
    const names = ['nginx', 'uws', 'node']
    const full = Object.fromEntries(names.map(n => [n, []]))
    const paced = Object.fromEntries(names.map(n => [n, []]))
    for (let round = 0; round < ROUNDS; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length])
      for (const who of order) {
        const url = `http://127.0.0.1:${PORTS[who]}/api/items/7`
        const before = cpuUs(pids[who])
        const r = runWrk(url, { duration: DURATION })
        full[who].push({ ...r, cpu: (cpuUs(pids[who]) - before) / r.requests })
        paced[who].push(runWrk(url, { duration: DURATION, script: path.join(work, 'paced.lua') }))
        console.log(`round ${round + 1} ${who}: ${Math.round(r.rps)} req/s, ${full[who].at(-1).cpu.toFixed(1)} µs CPU/request, paced p99 ${paced[who].at(-1).p99.toFixed(2)} ms${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}`)
      }
    }
    const nginxRps = median(full.nginx.map(r => r.rps))
    const label = { nginx: 'nginx (proxy_pass, keep-alive)', uws: 'gateway, GATEWAY_SERVER=uws', node: 'gateway, GATEWAY_SERVER=node' }
    const lines = [
      `| Contender | req/s (wrk -t1 -c50) | × nginx | CPU µs per request | paced req/s | p50 ms | p99 ms |`,
      '|---|---:|---:|---:|---:|---:|---:|'
    ]
    for (const who of names) {
      const rps = median(full[who].map(r => r.rps))
      lines.push(`| ${label[who]} | ${Math.round(rps)} | ${(rps / nginxRps).toFixed(2)} | ${median(full[who].map(r => r.cpu)).toFixed(1)} | ${Math.round(median(paced[who].map(r => r.rps)))} | ${median(paced[who].map(r => r.p50)).toFixed(2)} | ${median(paced[who].map(r => r.p99)).toFixed(2)} |`)
    }
    console.log(`\n${ROUNDS} rounds, ${DURATION} each, paced: ${PACE_MS} ms pause per connection after each answer (medians)\n`)
    console.log(lines.join('\n'))
  } finally { cleanup() }
}

await main()
process.exit(0)
