#!/usr/bin/env node
/**
 * The headline bench: Gatehouse beside the proxies users compare it with, per request and per core.
 *
 *   npm run bench        (= npm run build && node bench/peers.mjs)
 *   BENCH_ROUNDS=5 BENCH_DURATION=8s BENCH_SIZES=54,1024 BENCH_CONTENDERS=nginx,haproxy,fastify,gatehouse,gatehouse-logs-off BENCH_EXTRAS=1
 *
 * All on 127.0.0.1. Backend: nginx (one worker) answering `return 200` with a 54-byte JSON body
 * (`/items/s<id>`) or a 1 KiB one (`/items/<id>`). Contenders, each limited to one core by its own
 * configuration, each adding X-Team and X-Forwarded-For and keeping connections to the backend alive:
 *   nginx       proxy_pass, worker_processes 1, upstream keepalive 128, access log off
 *   haproxy     nbthread 1, http-reuse always, no log
 *   fastify     fastify 5 + @fastify/http-proxy (undici keep-alive pool), one Node.js process (bench/peer-fastify.mjs)
 *   gatehouse   the service as `npm start` runs it (bench/service-server.mjs: embedded store, request
 *               log on, LOG_LEVEL info with one access line per request to a file), GATEWAY_THREADS=1
 *   gatehouse-logs-off  the same with REQUEST_LOG_RETENTION_HOURS=0 and LOG_LEVEL=warn
 * Saturation: `wrk -t1 -c50 -d<duration>` GET; every round runs every contender once per size, the
 * order rotating each round. CPU µs/req = the contender's processes' CPU time (/proc utime+stime, all
 * threads and workers) over the run / requests answered. Ratios are per round against nginx in the
 * same round; the table shows their medians. Equal moderate load: the same wrk with each connection
 * pausing 10 ms after every answer (about 4,500 req/s offered, below every contender's saturation):
 * p99 there compares queues of the same length; "p99 − nginx" is the median of per-round differences.
 * With BENCH_EXTRAS=1 (default) it then runs bench/start-up.mjs (fresh start to /readyz, idle RSS)
 * and bench/sse-fanout.mjs (10,000 subscribers, one change). Prints a markdown section for RESULTS.md.
 * Only a quiet host gives quotable figures: the load average before and after is printed with them.
 */
import { execFileSync, fork, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, runWrk, startBenchService } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work-peers')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const SIZES = (process.env.BENCH_SIZES ?? '54,1024').split(',').map(Number)
const ALL = ['nginx', 'haproxy', 'fastify', 'gatehouse', 'gatehouse-logs-off']
const CONTENDERS = (process.env.BENCH_CONTENDERS ?? ALL.join(',')).split(',').filter(c => ALL.includes(c))
if (!CONTENDERS.includes('nginx')) CONTENDERS.unshift('nginx')
const EXTRAS = process.env.BENCH_EXTRAS !== '0'
const PACE_MS = 10
const PORTS = { backend: 18911, nginx: 18912, haproxy: 18913, fastify: 18914 }
const SMALL = JSON.stringify({ id: 7, name: 'item-7', price: 10.5, tags: ['a', 'b'] })
const LARGE = JSON.stringify({ items: Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'], price: i * 1.5 })) }).slice(0, 1000).padEnd(1024, ' ')
if (SMALL.length !== 54 || LARGE.length !== 1024) throw new Error('answer sizes changed')
const pathFor = (size) => size === 54 ? '/open/items/s7' : '/open/items/7'

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
const loadavg = () => os.loadavg().map(v => v.toFixed(2)).join(' ')

/** CPU time in µs of a process and its descendants (all threads), from /proc. */
function treeCpuUs (pid) {
  let ticks = 0
  const visit = (p) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[11]) + Number(f[12])
      for (const c of fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(' ')) if (c !== '') visit(c)
    } catch { /* gone */ }
  }
  visit(pid)
  return ticks * 10_000 // USER_HZ is 100 on Linux
}

function backendConf () {
  return `worker_processes 1; daemon off; pid ${work}/backend.pid; error_log ${work}/backend.err warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; client_body_temp_path ${work}/tmp_b;
  server { listen 127.0.0.1:${PORTS.backend}; default_type application/json;
    location ~ ^/items/s { return 200 '${SMALL}'; }
    location / { return 200 '${LARGE}'; } } }\n`
}

function nginxConf () {
  return `worker_processes 1; daemon off; pid ${work}/nginx.pid; error_log ${work}/nginx.err warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000; client_body_temp_path ${work}/tmp_n; proxy_temp_path ${work}/tmp_p;
  upstream backend { server 127.0.0.1:${PORTS.backend}; keepalive 128; }
  server { listen 127.0.0.1:${PORTS.nginx};
    location /open/ {
      rewrite ^/open/(.*)$ /$1 break;
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Team bench;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    } } }\n`
}

function haproxyConf () {
  return `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  http-reuse always
  option forwardfor
frontend fe
  bind 127.0.0.1:${PORTS.haproxy}
  http-request set-header X-Team bench
  http-request replace-path ^/open(/.*) \\1
  default_backend be
backend be
  server b1 127.0.0.1:${PORTS.backend}
`
}

async function waitOk (url) {
  for (let i = 0; i < 200; i++) {
    const r = await fetch(url, { headers: { connection: 'close' } }).catch(() => null)
    if (r !== null) { await r.arrayBuffer(); if (r.status === 200) return }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer 200`)
}

async function main () {
  ensureTools()
  for (const c of ['haproxy']) if (CONTENDERS.includes(c)) execFileSync('sh', ['-c', `command -v ${c} || test -x /usr/sbin/${c}`], { stdio: 'ignore' })
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  fs.writeFileSync(path.join(work, 'paced.lua'), `function delay() return ${PACE_MS} end\n`)
  const before = loadavg()
  const procs = []
  const services = []
  const stopAll = () => { for (const p of procs) try { p.kill('SIGTERM') } catch {} }
  process.on('exit', stopAll)
  const conf = (name, text) => { const f = path.join(work, name); fs.writeFileSync(f, text); return f }
  const nginxBin = fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx'
  procs.push(spawn(nginxBin, ['-c', conf('backend.conf', backendConf()), '-p', work], { stdio: 'inherit' }))
  const pids = {}
  const ports = {}
  try {
    await waitOk(`http://127.0.0.1:${PORTS.backend}/items/s1`)
    const nginx = spawn(nginxBin, ['-c', conf('nginx.conf', nginxConf()), '-p', work], { stdio: 'inherit' })
    procs.push(nginx); pids.nginx = nginx.pid; ports.nginx = PORTS.nginx
    if (CONTENDERS.includes('haproxy')) {
      const hap = spawn(fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy', ['-db', '-f', conf('haproxy.cfg', haproxyConf())], { stdio: ['ignore', 'ignore', 'inherit'] })
      procs.push(hap); pids.haproxy = hap.pid; ports.haproxy = PORTS.haproxy
    }
    if (CONTENDERS.includes('fastify')) {
      const fy = fork(path.join(here, 'peer-fastify.mjs'), [String(PORTS.fastify), String(PORTS.backend)], { stdio: 'inherit' })
      procs.push(fy); pids.fastify = fy.pid; ports.fastify = PORTS.fastify
      await new Promise((resolve, reject) => { fy.once('message', resolve); fy.once('exit', c => reject(new Error(`fastify peer exited (${c})`))) })
    }
    // One gateway thread: the data plane on one core, as the other contenders (the worker pool runs workflows only).
    const base = { PORT: '0', MANAGEMENT_PORT: '0', GATEWAY_THREADS: '1' }
    const opts = { work, backendPort: PORTS.backend }
    if (CONTENDERS.includes('gatehouse')) {
      const s = await startBenchService('gatehouse', { ...base, DATA_DIR: path.join(work, 'data-default') }, opts)
      services.push(s); procs.push(s.proc); pids.gatehouse = s.proc.pid; ports.gatehouse = s.port
    }
    if (CONTENDERS.includes('gatehouse-logs-off')) {
      const s = await startBenchService('gatehouse-logs-off', { ...base, DATA_DIR: path.join(work, 'data-quiet'), REQUEST_LOG_RETENTION_HOURS: '0', LOG_LEVEL: 'warn' }, opts)
      services.push(s); procs.push(s.proc); pids['gatehouse-logs-off'] = s.proc.pid; ports['gatehouse-logs-off'] = s.port
    }
    for (const c of CONTENDERS) for (const size of SIZES) await waitOk(`http://127.0.0.1:${ports[c]}${pathFor(size)}`)

    const run = (who, size, script) => {
      const c0 = treeCpuUs(pids[who])
      const r = runWrk(`http://127.0.0.1:${ports[who]}${pathFor(size)}`, { duration: DURATION, script })
      return { ...r, cpuUs: (treeCpuUs(pids[who]) - c0) / r.requests }
    }
    // Warm-up: JIT, pools, connections.
    for (const who of CONTENDERS) for (const size of SIZES) runWrk(`http://127.0.0.1:${ports[who]}${pathFor(size)}`, { duration: '2s' })
    const sat = {}
    const paced = {}
    for (const size of SIZES) { sat[size] = Object.fromEntries(CONTENDERS.map(c => [c, []])); paced[size] = Object.fromEntries(CONTENDERS.map(c => [c, []])) }
    const paceScript = path.join(work, 'paced.lua')
    for (let r = 0; r < ROUNDS; r++) {
      const order = CONTENDERS.map((_, i) => CONTENDERS[(i + r) % CONTENDERS.length])
      for (const size of SIZES) {
        for (const who of order) sat[size][who].push(run(who, size))
        for (const who of order) paced[size][who].push(run(who, size, paceScript))
      }
      console.error(`round ${r + 1}/${ROUNDS} done (load average ${loadavg()})`)
    }
    for (const s of services) await s.stop().catch(() => {})
    services.length = 0
    stopAll()
    const extras = EXTRAS ? runExtras() : null
    const after = loadavg()
    console.log(report({ sat, paced, extras, before, after }))
  } finally {
    for (const s of services) await s.stop().catch(() => {})
    stopAll()
  }
}

function runExtras () {
  const node = (args) => {
    try { return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1)) } catch (err) { return { error: err.message } }
  }
  console.error('start-up and idle RSS (bench/start-up.mjs 3) ...')
  const startUp = node([path.join(here, 'start-up.mjs'), '3'])
  console.error('SSE fan-out (bench/sse-fanout.mjs embedded 10000 5) ...')
  const sse = node([path.join(here, 'sse-fanout.mjs'), 'embedded', '10000', '5'])
  return { startUp, sse }
}

function report ({ sat, paced, extras, before, after }) {
  const f1 = (v) => Number.isFinite(v) ? v.toFixed(1) : '–'
  const f2 = (v) => Number.isFinite(v) ? v.toFixed(2) : '–'
  const cmd = `BENCH_ROUNDS=${ROUNDS} BENCH_DURATION=${DURATION} BENCH_SIZES=${SIZES.join(',')} BENCH_CONTENDERS=${CONTENDERS.join(',')} BENCH_EXTRAS=${EXTRAS ? 1 : 0} node bench/peers.mjs`
  const lines = [
    `## Gatehouse beside nginx, HAProxy and fastify, one core each (bench/peers.mjs)`, '',
    `Command: \`npm run build && ${cmd}\``, '',
    `Run: ${new Date().toISOString()}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}. ` +
    `Load average (1, 5, 15 min) before: ${before}; after: ${after}.`, ''
  ]
  for (const size of Object.keys(sat)) {
    const s = sat[size]
    const p = paced[size]
    const ratio = (who, key) => median(s[who].map((x, i) => x[key] / s.nginx[i][key]))
    lines.push(`### ${size}-byte answer`, '',
      '| Contender | req/s | × nginx | CPU µs/req | CPU × nginx | p99 ms (saturated) | req/s at equal load | CPU µs/req at equal load | p99 ms at equal load | p99 − nginx\'s, ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const who of Object.keys(s)) {
      const m = (xs, k) => median(xs.map(x => x[k]))
      const over = median(p[who].map((x, i) => x.p99 - p.nginx[i].p99))
      lines.push(`| ${who} | ${Math.round(m(s[who], 'rps'))} | ${f2(ratio(who, 'rps'))} | ${f1(m(s[who], 'cpuUs'))} | ${f2(ratio(who, 'cpuUs'))} | ${f2(m(s[who], 'p99'))} | ` +
        `${Math.round(m(p[who], 'rps'))} | ${f1(m(p[who], 'cpuUs'))} | ${f2(m(p[who], 'p99'))} | ${who === 'nginx' ? '' : f2(over)} |`)
    }
    lines.push('', 'Per round (req/s / CPU µs per request):', '')
    for (const who of Object.keys(s)) lines.push(`- ${who}: ${s[who].map(x => `${Math.round(x.rps)}/${f1(x.cpuUs)}`).join(', ')}`)
    lines.push('')
  }
  if (extras !== null) {
    const su = extras.startUp
    const sse = extras.sse
    const list = (xs, k) => Array.isArray(xs) ? xs.map(x => x[k]).join(', ') : '–'
    lines.push('### Start-up, idle memory, event fan-out', '',
      '| Measure | Goal | Result |', '|---|---|---|',
      `| Fresh start (embedded store) to GET /readyz 200, ms per round | < 3000 | ${list(su.embedded, 'ms_to_ready')} |`,
      `| Idle RSS 5 s after ready (embedded), MB per round | < 250 | ${list(su.embedded, 'idle_rss_mb')} |`,
      `| Fresh start with DATABASE_URL to /readyz, ms | | ${list(su.postgres, 'ms_to_ready')} |`,
      `| 10,000 SSE subscribers: POST start to the last subscriber's event, median ms | < 100 | ${sse.error ?? f1(sse.median_last_ms)} |`,
      `| … the management answer (POST start to its answer), median ms | answers before the fan-out | ${sse.error ?? f1(sse.median_post_ms)} |`,
      `| … first to last subscriber (the fan-out itself), median ms | | ${sse.error ?? f1(sse.median_spread_ms)} |`, '')
  }
  return lines.join('\n')
}

await main()
process.exit(0)
