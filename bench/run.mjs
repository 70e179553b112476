#!/usr/bin/env node
/**
 * npm run bench: a fast backend (nginx `return 200`), nginx as a reverse proxy
 * with upstream keep-alive (one worker), and the gateway (one event loop) with one
 * published proxy, all on 127.0.0.1. wrk -t1 -c50, GET and POST of 1 KiB, rounds
 * interleaved (nginx, gateway, nginx, gateway, ...), medians. Then the whole service
 * (bench/service-server.mjs) with an open proxy, the same proxy behind an api_key
 * profile and an enabled policy, and a workflow proxy, in interleaved rounds, each
 * round also timing the workflow engine called in-process (bench/engine-loop.mjs);
 * then a CPU profile of the gateway under GET load. Writes bench/RESULTS.md. Only
 * ratios from one run mean anything: the load generator, proxies and backend share
 * the machine's cores. nginx and wrk are installed with apt-get when missing (root,
 * or sudo without a password; otherwise the run stops and says so).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const PORTS = { backend: 18901, nginx: 18902, gateway: 18903, service: 18904, management: 18905 }
const BODY = JSON.stringify({ items: Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'], price: i * 1.5 })) }).slice(0, 1000).padEnd(1024, ' ')

function have (cmd) { return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0 }
function ensureTools () {
  const missing = ['nginx', 'wrk'].filter(c => !have(c))
  if (missing.length === 0) return
  console.log(`installing ${missing.join(', ')} from Debian (apt-get)`)
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n']
  if (sudo.length > 0 && !have('sudo')) throw new Error(`${missing.join(' and ')} missing: install them (apt-get install nginx wrk) and run again`)
  const run = (args) => execFileSync(sudo.length ? sudo[0] : args[0], sudo.length ? [...sudo.slice(1), ...args] : args.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  run(['apt-get', 'update', '-qq'])
  run(['apt-get', 'install', '-y', '-qq', 'nginx', 'wrk'])
}

function nginxConf () {
  fs.mkdirSync(path.join(work, 'logs'), { recursive: true })
  fs.writeFileSync(path.join(work, 'body.json'), BODY)
  fs.writeFileSync(path.join(work, 'post.lua'), `wrk.method = "POST"\nwrk.body = ${JSON.stringify(BODY)}\nwrk.headers["Content-Type"] = "application/json"\n`)
  const conf = `
worker_processes 1;
daemon off;
error_log ${work}/logs/error.log warn;
pid ${work}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${work}/tmp_body;
  proxy_temp_path ${work}/tmp_proxy;
  fastcgi_temp_path ${work}/tmp_fcgi;
  uwsgi_temp_path ${work}/tmp_uwsgi;
  scgi_temp_path ${work}/tmp_scgi;
  keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:${PORTS.backend}; keepalive 128; }
  server {
    listen 127.0.0.1:${PORTS.backend};
    location / { default_type application/json; return 200 '${BODY.replace(/'/g, '')}'; }
  }
  server {
    listen 127.0.0.1:${PORTS.nginx};
    location /api/ {
      proxy_pass http://backend/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Team bench;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering on;
    }
  }
}`
  const file = path.join(work, 'nginx.conf')
  fs.writeFileSync(file, conf)
  return file
}

async function waitPort (port, urlPath = '/api/items/1') {
  for (let i = 0; i < 100; i++) {
    try { await fetch(`http://127.0.0.1:${port}${urlPath}`); return } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`port ${port} did not open`)
}

function wrk (port, method, urlPath = '/api/items/7', headers = {}) {
  const args = ['-t1', '-c50', `-d${DURATION}`, '--latency']
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`)
  if (method === 'POST') args.push('-s', path.join(work, 'post.lua'))
  args.push(`http://127.0.0.1:${port}${urlPath}`)
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
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }

async function main () {
  ensureTools()
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  const conf = nginxConf()
  const nginx = spawn('nginx', ['-c', conf, '-p', work], { stdio: 'inherit' })
  const profDir = path.join(work, 'prof')
  const startGateway = (prof) => {
    const args = prof ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []
    const gw = spawn(process.execPath, [...args, path.join(here, 'gateway-server.mjs'), String(PORTS.gateway), String(PORTS.backend)], { stdio: ['ignore', 'pipe', 'inherit'] })
    return gw
  }
  let gw = startGateway(false)
  const cleanup = () => { try { gw.kill('SIGTERM') } catch {} ; try { nginx.kill('SIGTERM') } catch {} }
  process.on('exit', cleanup)
  try {
    await waitPort(PORTS.nginx)
    await waitPort(PORTS.gateway)
    const results = { GET: { backend: [], nginx: [], gateway: [] }, POST: { backend: [], nginx: [], gateway: [] } }
    // Warm-up: JIT, keep-alive pools.
    wrk(PORTS.gateway, 'GET'); wrk(PORTS.nginx, 'GET')
    for (let r = 0; r < ROUNDS; r++) {
      for (const method of ['GET', 'POST']) {
        results[method].backend.push(wrk(PORTS.backend, method))
        // Alternate who goes first each round.
        const order = r % 2 === 0 ? ['nginx', 'gateway'] : ['gateway', 'nginx']
        for (const who of order) results[method][who].push(wrk(PORTS[who], method))
      }
      console.log(`round ${r + 1}/${ROUNDS} done`)
    }
    gw.kill('SIGTERM')
    await new Promise(resolve => gw.on('exit', resolve))
    const scenarios = await runServiceScenarios()
    // A CPU profile of the gateway under the GET load.
    gw = startGateway(true)
    await waitPort(PORTS.gateway)
    wrk(PORTS.gateway, 'GET')
    gw.kill('SIGTERM')
    await new Promise(resolve => gw.on('exit', resolve))
    const profile = summariseProfile(profDir)
    writeResults(results, scenarios, profile)
  } finally {
    cleanup()
  }
}

// Same paths and headers for every contender, so only the gateway's work differs.
const SCENARIOS = { open: '/open/items/7', auth: '/auth/items/7', flow: '/flow/items/7' }

/** The whole service: open proxy vs api_key + policy, plain proxy vs workflow proxy, and the engine alone. */
async function runServiceScenarios () {
  const svc = spawn(process.execPath, [path.join(here, 'service-server.mjs'), String(PORTS.service), String(PORTS.management), String(PORTS.backend), path.join(work, 'data')],
    { stdio: ['pipe', 'pipe', 'inherit'] })
  const stopService = async () => { if (svc.exitCode === null) { svc.kill('SIGTERM'); await new Promise(resolve => svc.on('exit', resolve)) } }
  try {
    // The service answers with one JSON line per question (first: the headers to send; then CPU time).
    let out = ''
    const waiting = []
    svc.stdout.on('data', d => {
      out += d
      let i
      while ((i = out.indexOf('\n')) >= 0) { const line = out.slice(0, i); out = out.slice(i + 1); waiting.shift()?.resolve(JSON.parse(line)) }
    })
    svc.on('exit', code => { for (const w of waiting.splice(0)) w.reject(new Error(`the service exited (${code})`)) })
    const nextLine = () => new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    const { headers } = await nextLine()
    const cpu = async () => { const p = nextLine(); svc.stdin.write('cpu\n'); return (await p).cpu_us }
    // One wrk run, with the service's CPU time per request over it.
    const measure = async (who) => {
      const c0 = await cpu()
      const r = wrk(PORTS.service, 'GET', SCENARIOS[who], headers)
      return { ...r, cpuUs: (await cpu() - c0) / r.requests }
    }
    const seconds = Number(/^(\d+)s$/.exec(DURATION)?.[1] ?? 8)
    const engine = () => JSON.parse(execFileSync(process.execPath, [path.join(here, 'engine-loop.mjs'), String(seconds)], { encoding: 'utf8' }))
    const results = { open: [], auth: [], flow: [], engine: [] }
    // Warm-up: JIT, pools, the worker thread, the verified-key cache.
    for (const who of Object.keys(SCENARIOS)) wrk(PORTS.service, 'GET', SCENARIOS[who], headers)
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['open', 'auth', 'flow'] : ['flow', 'auth', 'open']
      for (const who of order) results[who].push(await measure(who))
      results.engine.push(engine())
      console.log(`service round ${r + 1}/${ROUNDS} done`)
    }
    return results
  } finally {
    await stopService()
  }
}

function summariseProfile (dir) {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter(f => f.endsWith('.cpuprofile')) : []
  if (files.length === 0) return null
  const prof = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'))
  const self = new Map()
  const dt = new Map()
  for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0))
  let total = 0
  for (const n of prof.nodes) {
    const t = dt.get(n.id) ?? 0
    total += t
    const f = n.callFrame
    const where = f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim()
    self.set(key, (self.get(key) ?? 0) + t)
  }
  return { total, top: [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => ({ fn: k, pct: 100 * v / total })) }
}

const summary = (xs) => ({ rps: median(xs.map(x => x.rps)), p50: median(xs.map(x => x.p50)), p99: median(xs.map(x => x.p99)), non2xx: xs.reduce((a, x) => a + x.non2xx, 0) })

function scenarioLines (sc) {
  const s = {}
  for (const who of ['open', 'auth', 'flow']) s[who] = { ...summary(sc[who]), cpuUs: median(sc[who].map(x => x.cpuUs)) }
  const engine = { rps: median(sc.engine.map(x => x.runs_per_second)), cpuUs: median(sc.engine.map(x => x.cpu_us_per_run)) }
  const x = (a, b) => (a / b).toFixed(2) + 'x'
  // Per round, the ratio of two contenders measured back to back; the median of those.
  const roundRatio = (a, b, key) => median(sc[a].map((r, i) => r[key] / sc[b][i][key]))
  const perRound = (a, b, key) => sc[a].map((r, i) => (r[key] / sc[b][i][key]).toFixed(2)).join(', ')
  const row = (name, r, vsRps, vsCpu) => `| ${name} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} | ${r.cpuUs.toFixed(1)} | ${vsRps} | ${vsCpu} |`
  return ['', '## Authentication and limits; workflows', '',
    'The whole service (`bench/service-server.mjs`: embedded store, memory cache, one worker thread, request log off),',
    `set up through the management API. \`wrk -t1 -c50 -d${DURATION}\` GET with the same three headers`,
    '(`Authorization: Bearer <api key>`, `X-Client-ID`, `X-Profile-ID`) on every path, in interleaved rounds',
    '(open, auth, workflow, then the reverse order), medians; each round also runs the engine alone.',
    'CPU µs/req is the service process\'s CPU time (all threads) over the run divided by the requests served:',
    'unlike req/s it barely moves when other work competes for the cores.', '',
    '- open: `/open/items/{id}`, a collection without `auth_required`, forwarding to the backend',
    '- auth: `/auth/items/{id}`, the same proxy in a collection with `auth_required`, called with an `api_key` profile',
    '  whose enabled policy has a rate limit and a monthly quota never reached (both counted on every request)',
    '- workflow: `/flow/items/{id}`, answered by its workflow `http_trigger` → `set_node` → `response_node` in the worker pool',
    '- engine: `runWorkflow` of the same workflow called in-process (`bench/engine-loop.mjs`), 50 runs in flight', '',
    '| Target | req/s | p50 ms | p99 ms | non-2xx | CPU µs/req | req/s ratio | CPU/req ratio |', '|---|---:|---:|---:|---:|---:|---|---|',
    row('open proxy', s.open, '1.00x', '1.00x'),
    row('auth (api_key + policy)', s.auth, `${x(roundRatio('auth', 'open', 'rps'), 1)} of open`, `${x(roundRatio('auth', 'open', 'cpuUs'), 1)} of open`),
    row('workflow proxy', s.flow, `${x(roundRatio('flow', 'open', 'rps'), 1)} of the plain proxy; ${x(s.flow.rps, engine.rps)} of the engine alone`,
      `${x(roundRatio('flow', 'open', 'cpuUs'), 1)} of the plain proxy; ${x(s.flow.cpuUs, engine.cpuUs)} of the engine alone`),
    `| engine in-process | ${Math.round(engine.rps)} runs/s | | | | ${engine.cpuUs.toFixed(1)} | | |`,
    '', 'Ratios between proxies are medians of the per-round ratios (contenders measured back to back).', '',
    'Every round (req/s, CPU µs/req; in brackets the ratio to open in the same round):', '',
    `- open: ${sc.open.map(r => `${Math.round(r.rps)} / ${r.cpuUs.toFixed(1)}`).join('; ')}`,
    `- auth: ${sc.auth.map(r => `${Math.round(r.rps)} / ${r.cpuUs.toFixed(1)}`).join('; ')} (req/s ${perRound('auth', 'open', 'rps')}; CPU ${perRound('auth', 'open', 'cpuUs')})`,
    `- workflow: ${sc.flow.map(r => `${Math.round(r.rps)} / ${r.cpuUs.toFixed(1)}`).join('; ')} (req/s ${perRound('flow', 'open', 'rps')}; CPU ${perRound('flow', 'open', 'cpuUs')})`,
    `- engine: ${sc.engine.map(r => `${Math.round(r.runs_per_second)} runs/s / ${r.cpu_us_per_run.toFixed(1)}`).join('; ')}`]
}

function writeResults (results, scenarios, profile) {
  const row = (method, who) => summary(results[method][who])
  const lines = []
  const cmd = `npm run bench   # BENCH_ROUNDS=${ROUNDS} BENCH_DURATION=${DURATION}`
  lines.push('# Benchmark results', '', `Command: \`${cmd}\``, '', `Run: ${new Date().toISOString()} on ${process.platform} ${process.arch}, ${os.cpus().length} cores, Node ${process.version}.`, '',
    `Load: \`wrk -t1 -c50 -d${DURATION}\` against \`/api/items/7\` (a path parameter route), ${ROUNDS} interleaved rounds, medians.`,
    'Backend: nginx `return 200` with a 1 KiB JSON body. nginx proxy: 1 worker, upstream keep-alive 128, access log off.',
    'Gateway: one event loop, one published proxy, log level warn. All on 127.0.0.1, sharing the same cores as wrk.', '',
    '| Method | Target | req/s | p50 ms | p99 ms | non-2xx | gateway / nginx |', '|---|---|---:|---:|---:|---:|---:|')
  for (const method of ['GET', 'POST']) {
    const n = row(method, 'nginx')
    for (const who of ['backend', 'nginx', 'gateway']) {
      const r = row(method, who)
      lines.push(`| ${method} | ${who === 'backend' ? 'backend direct' : who} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} | ${who === 'gateway' ? (r.rps / n.rps).toFixed(2) + 'x' : ''} |`)
    }
  }
  lines.push('', 'Every round:', '')
  for (const method of ['GET', 'POST']) {
    lines.push(`- ${method}: nginx ${results[method].nginx.map(x => Math.round(x.rps)).join(', ')}; gateway ${results[method].gateway.map(x => Math.round(x.rps)).join(', ')}`)
  }
  lines.push(...scenarioLines(scenarios))
  if (profile !== null) {
    lines.push('', '## Where the gateway spends its time (CPU profile, GET load, self time)', '', '| Function | self % |', '|---|---:|')
    for (const p of profile.top) lines.push(`| \`${p.fn}\` | ${p.pct.toFixed(1)} |`)
  }
  const file = path.join(here, 'RESULTS.md')
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const notes = previous.includes('<!-- notes -->') ? previous.slice(previous.indexOf('<!-- notes -->')) : ''
  fs.writeFileSync(file, lines.join('\n') + '\n' + (notes !== '' ? '\n' + notes : ''))
  console.log(lines.join('\n'))
}

await main()
process.exit(0)
