#!/usr/bin/env node
/**
 * npm run bench:service: a fast backend (nginx `return 200`), nginx as a reverse proxy with upstream
 * keep-alive (one worker), and Gatehouse started the way users run it, all on 127.0.0.1:
 *   - default: `npm start`'s configuration (embedded store, request log on, LOG_LEVEL info with
 *     an access line per request written to a file, memory cache, WORKERS = cores - 1)
 *   - postgres: the same on PostgreSQL (DATABASE_URL, a fresh database on the local server)
 *   - redis: PostgreSQL with CACHE_TYPE=redis (two instances sharing the database; the second one
 *     measures how fast a change made on the first is live there)
 *   - default with logs off: REQUEST_LOG_RETENTION_HOURS=0 and LOG_LEVEL=warn (what the two logs cost)
 *   - default with terminal logs: LOG_FORMAT=pretty, what `npm start` in a terminal writes
 *   - gateway alone (bench/gateway-server.mjs: no store, no request log, no worker pool)
 * wrk -t1 -c50 GET, every contender once per round, the order rotating each round, medians, and
 * per round ratios. Then latency at equal load (the same wrk with a 10 ms pause per connection
 * after each answer, for nginx and the open proxy of each start), a CPU profile of the service's main thread per path (default
 * open, auth and workflow; PostgreSQL open; Redis auth), config-propagation latency, start-up time and idle RSS. Writes bench/RESULTS.md.
 * Only ratios from one run mean anything: the load generator, proxies and backend share the
 * machine's cores. nginx and wrk are installed with apt-get when missing (root, or sudo without a
 * password; otherwise the run stops and says so).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createBenchDatabase, ensureTools, runWrk, startBenchService } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const PORTS = { backend: 18901, nginx: 18902, gateway: 18903 }
// Latency at equal load: 50 connections, each pausing PACE_MS between requests (about 4,500
// req/s offered, under every contender's saturation), so p99 compares queues of the same length.
const PACE_MS = 10
const PACED = ['nginx', 'default open', 'default open, logs off', 'postgres open', 'redis open']
const BODY = JSON.stringify({ items: Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'], price: i * 1.5 })) }).slice(0, 1000).padEnd(1024, ' ')

function nginxConf () {
  fs.mkdirSync(path.join(work, 'logs'), { recursive: true })
  fs.writeFileSync(path.join(work, 'body.json'), BODY)
  fs.writeFileSync(path.join(work, 'post.lua'), `wrk.method = "POST"\nwrk.body = ${JSON.stringify(BODY)}\nwrk.headers["Content-Type"] = "application/json"\n`)
  // Each connection waits PACE_MS after every answer: the same offered load for every contender.
  fs.writeFileSync(path.join(work, 'paced.lua'), `function delay() return ${PACE_MS} end\n`)
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
    location ~ ^/(api|open)/ {
      rewrite ^/(api|open)/(.*)$ /$2 break;
      proxy_pass http://backend;
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

function wrk (port, method, urlPath = '/api/items/7', headers = {}, script = method === 'POST' ? 'post.lua' : undefined) {
  return runWrk(`http://127.0.0.1:${port}${urlPath}`, { duration: DURATION, headers, script: script === undefined ? undefined : path.join(work, script) })
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }


const TARGETS = {
  nginx: { port: () => PORTS.nginx, path: '/open/items/7' },
  alone: { port: () => PORTS.gateway, path: '/api/items/7' },
  'default open': { svc: 'default', path: '/open/items/7' },
  'default auth': { svc: 'default', path: '/auth/items/7', auth: true },
  'default workflow': { svc: 'default', path: '/flow/items/7' },
  'default open, logs off': { svc: 'quiet', path: '/open/items/7' },
  'default open, terminal logs': { svc: 'pretty', path: '/open/items/7' },
  'postgres open': { svc: 'postgres', path: '/open/items/7' },
  'redis open': { svc: 'redis', path: '/open/items/7' },
  'redis auth': { svc: 'redis', path: '/auth/items/7', auth: true }
}

/** A service instance (bench/service-server.mjs) and its command channel. */
async function startService (name, env, extra = {}) {
  return await startBenchService(name, env, { work, backendPort: PORTS.backend, ...extra })
}

async function main () {
  ensureTools()
  fs.rmSync(work, { recursive: true, force: true })
  fs.mkdirSync(work, { recursive: true })
  const conf = nginxConf()
  const nginx = spawn('nginx', ['-c', conf, '-p', work], { stdio: 'inherit' })
  const gw = spawn(process.execPath, [path.join(here, 'gateway-server.mjs'), String(PORTS.gateway), String(PORTS.backend)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const services = {}
  const dbs = []
  const cleanup = () => { try { gw.kill('SIGTERM') } catch {} ; try { nginx.kill('SIGTERM') } catch {} ; for (const s of Object.values(services)) try { s.proc.kill('SIGTERM') } catch {} }
  process.on('exit', cleanup)
  try {
    await waitPort(PORTS.nginx, '/open/items/1')
    await waitPort(PORTS.gateway)
    const base = { PORT: '0', MANAGEMENT_PORT: '0' }
    // One at a time: start-up time is measured too.
    services.default = await startService('default', { ...base, DATA_DIR: path.join(work, 'data-default') })
    // The default start without its two per-request logs (request log, access line): what they cost.
    services.quiet = await startService('quiet', { ...base, DATA_DIR: path.join(work, 'data-quiet'), REQUEST_LOG_RETENTION_HOURS: '0', LOG_LEVEL: 'warn' })
    // The default start as in a terminal (LOG_FORMAT=auto on a TTY): human-readable lines.
    services.pretty = await startService('pretty', { ...base, DATA_DIR: path.join(work, 'data-pretty'), LOG_FORMAT: 'pretty' })
    const pgDb = await createBenchDatabase('gh_bench'); dbs.push(pgDb)
    services.postgres = await startService('postgres', { ...base, DATABASE_URL: pgDb.url, DATA_DIR: path.join(work, 'data-pg') })
    const redisDb = await createBenchDatabase('gh_bench'); dbs.push(redisDb)
    const prefix = `gh-bench:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`
    const redisEnv = { ...base, DATABASE_URL: redisDb.url, CACHE_TYPE: 'redis', DATA_DIR: path.join(work, 'data-redis') }
    services.redis = await startService('redis', redisEnv, { keyPrefix: prefix })
    services.redisB = await startService('redis-b', redisEnv, { keyPrefix: prefix, setup: false })
    await new Promise(resolve => setTimeout(resolve, 2000))
    const idle = { rss: (await services.default.ask('rss')).rss, msToReady: services.default.msToReady, pgRss: (await services.postgres.ask('rss')).rss, pgMsToReady: services.postgres.msToReady }
    // V8 gives back the young generation the start grew only after some idle time (its memory
    // reducer): read the same processes again once they have been idle for 30 s more.
    await new Promise(resolve => setTimeout(resolve, 30_000))
    idle.rssLater = (await services.default.ask('rss')).rss
    idle.pgRssLater = (await services.postgres.ask('rss')).rss

    const run = async (who, script) => {
      const tg = TARGETS[who]
      const svc = tg.svc === undefined ? null : services[tg.svc]
      const c0 = svc === null ? 0 : (await svc.ask('cpu')).cpu_us
      const r = wrk(svc === null ? tg.port() : svc.port, 'GET', tg.path, tg.auth ? svc.headers : {}, script)
      return { ...r, cpuUs: svc === null ? null : ((await svc.ask('cpu')).cpu_us - c0) / r.requests }
    }
    const names = Object.keys(TARGETS)
    const results = Object.fromEntries(names.map(n => [n, []]))
    for (const who of names) await run(who) // warm-up: JIT, pools, worker threads, the verified-key cache
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order each round so no contender always follows the same neighbour.
      const order = names.map((_, i) => names[(i + r * 3) % names.length])
      for (const who of order) results[who].push(await run(who))
      console.log(`round ${r + 1}/${ROUNDS} done`)
    }
    const paced = Object.fromEntries(PACED.map(n => [n, []]))
    for (let r = 0; r < ROUNDS; r++) {
      for (const who of PACED.map((_, i) => PACED[(i + r) % PACED.length])) paced[who].push(await run(who, 'paced.lua'))
      console.log(`paced round ${r + 1}/${ROUNDS} done`)
    }

    // Where the time goes: a CPU profile of the service's main thread under each path's load.
    const profiles = {}
    for (const who of ['default open', 'default auth', 'default workflow', 'postgres open', 'redis auth']) {
      const file = path.join(work, `${who.replace(/ /g, '-')}.cpuprofile`)
      const svc = services[TARGETS[who].svc]
      await svc.ask('prof-start')
      await run(who)
      await svc.ask('prof-stop ' + file)
      profiles[who] = summariseProfile(file)
    }

    // Config propagation: a proxy created and published on instance A; how long until A and B serve it.
    const propagation = { local: [], remote: [] }
    const until200 = async (port, p, t0) => {
      for (let i = 0; i < 4000; i++) {
        const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers: { connection: 'close' } }).catch(() => null)
        if (res !== null) { await res.arrayBuffer(); if (res.status === 200) return performance.now() - t0 }
        await new Promise(resolve => setTimeout(resolve, 2))
      }
      return Infinity
    }
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now()
      const { path: p } = await services.redis.ask(`create ${i}`)
      const [local, remote] = await Promise.all([until200(services.redis.port, p, t0), until200(services.redisB.port, p, t0)])
      propagation.local.push(local); propagation.remote.push(remote)
    }
    writeResults(results, paced, profiles, propagation, idle)
  } finally {
    for (const s of Object.values(services)) await s.stop().catch(() => {})
    for (const d of dbs) await d.drop().catch(() => {})
    cleanup()
  }
}

function summariseProfile (file) {
  if (!fs.existsSync(file)) return null
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'))
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
  return { total, top: [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => ({ fn: k, pct: 100 * v / total })) }
}

const summary = (xs) => ({ rps: median(xs.map(x => x.rps)), p50: median(xs.map(x => x.p50)), p99: median(xs.map(x => x.p99)), non2xx: xs.reduce((a, x) => a + x.non2xx, 0), cpuUs: xs[0].cpuUs === null ? null : median(xs.map(x => x.cpuUs)) })

function writeResults (results, paced, profiles, propagation, idle) {
  // Per round, the ratio of two contenders measured in the same round; the median of those.
  const ratio = (a, b, key = 'rps') => median(results[a].map((r, i) => r[key] / results[b][i][key]))
  const x = (v) => v.toFixed(2) + 'x'
  const ms = (v) => Number.isFinite(v) ? v.toFixed(0) : 'never'
  const lines = []
  const cmd = `npm run bench:service   # BENCH_ROUNDS=${ROUNDS} BENCH_DURATION=${DURATION}`
  lines.push('# Benchmark results', '', `Command: \`${cmd}\``, '',
    `Run: ${new Date().toISOString()} on ${process.platform} ${process.arch}, ${os.cpus().length} cores, Node ${process.version}; load average at the end ${os.loadavg().map(v => v.toFixed(1)).join(' ')} (the machine was shared with other busy sessions).`, '',
    `Load: \`wrk -t1 -c50 -d${DURATION}\` GET, ${ROUNDS} rounds, every contender once per round, the order rotating each round; medians.`,
    'Backend: nginx `return 200` with a 1 KiB JSON body. nginx proxy: 1 worker, upstream keep-alive 128, access log off.',
    'Gatehouse as users start it (`bench/service-server.mjs` calls `start()` with the defaults `npm start` has:',
    'request log on, LOG_LEVEL info with one access line per request, written to a file; memory cache; WORKERS = cores − 1):',
    '**default** = embedded store; **postgres** = `DATABASE_URL` on the local PostgreSQL 15; **redis** = PostgreSQL with',
    '`CACHE_TYPE=redis` (auth counts its rate limit and quota in Redis). **default open, logs off** = the default start with',
    '`REQUEST_LOG_RETENTION_HOURS=0` and `LOG_LEVEL=warn` (no request log, no access line). **default open, terminal logs** = the default start',
    'with `LOG_FORMAT=pretty`, the lines `npm start` prints in a terminal (here to a file). **alone** = the gateway with no store, no request log and',
    'no worker pool (`bench/gateway-server.mjs`). Paths: open `/open/items/{id}`; auth: the same proxy in a collection with',
    '`auth_required`, an `api_key` profile and a policy with a rate limit and a monthly quota (never reached); workflow:',
    '`http_trigger → set_node → response_node` in the worker pool. CPU µs/req: the service process\'s CPU time (all threads)',
    'over the run divided by the requests served.', '',
    '| Contender | req/s | p50 ms | p99 ms | non-2xx | CPU µs/req | ratio (median of per-round ratios) |', '|---|---:|---:|---:|---:|---:|---|')
  const vs = {
    nginx: '1.00x nginx', alone: `${x(ratio('alone', 'nginx'))} nginx`,
    'default open': `${x(ratio('default open', 'nginx'))} nginx`,
    'default auth': `${x(ratio('default auth', 'default open'))} of default open`,
    'default workflow': `${x(ratio('default workflow', 'default open'))} of default open`,
    'default open, logs off': `${x(ratio('default open, logs off', 'nginx'))} nginx; ${x(ratio('default open', 'default open, logs off'))} of it with the logs on`,
    'default open, terminal logs': `${x(ratio('default open, terminal logs', 'nginx'))} nginx; ${x(ratio('default open, terminal logs', 'default open'))} of default open`,
    'postgres open': `${x(ratio('postgres open', 'nginx'))} nginx`,
    'redis open': `${x(ratio('redis open', 'nginx'))} nginx`,
    'redis auth': `${x(ratio('redis auth', 'redis open'))} of redis open`
  }
  for (const who of Object.keys(results)) {
    const r = summary(results[who])
    lines.push(`| ${who} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} | ${r.cpuUs === null ? '' : r.cpuUs.toFixed(1)} | ${vs[who]} |`)
  }
  lines.push('', 'Every round (req/s):', '')
  for (const who of Object.keys(results)) lines.push(`- ${who}: ${results[who].map(r => Math.round(r.rps)).join(', ')}`)
  lines.push('', '## Latency at equal load', '',
    `The same GET with \`wrk -t1 -c50 -d${DURATION} -s paced.lua\`: each connection pauses ${PACE_MS} ms after every answer, so every`,
    'contender gets about the same offered load, below its saturation, and p99 compares like with like (at saturation',
    'the slower contender also has the longer queue). Medians of the rounds; p99 minus nginx\'s per round, median.', '',
    '| Contender | req/s | p50 ms | p99 ms | p99 − nginx\'s, ms |', '|---|---:|---:|---:|---:|')
  for (const who of Object.keys(paced)) {
    const r = summary(paced[who])
    const over = median(paced[who].map((x, i) => x.p99 - paced.nginx[i].p99))
    lines.push(`| ${who} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${who === 'nginx' ? '' : over.toFixed(2)} |`)
  }
  const p = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] }
  const mb = bytes => (bytes / 1048576).toFixed(0)
  lines.push('', '## Configuration changes, start-up, memory', '',
    `- A proxy created and published through instance A's management API (redis variant), timed from the POST until a GET answers 200: on A median ${ms(p(propagation.local, 0.5))} ms (max ${ms(p(propagation.local, 1))}); on instance B median ${ms(p(propagation.remote, 0.5))} ms (max ${ms(p(propagation.remote, 1))}), ${propagation.remote.length} changes; the store poll (1 s) is the fallback. Includes the management request itself and the probes' own connections.`,
    `- Default start (fresh embedded data directory) to ready, as the bench sees it (process start, store creation, migrations, listeners, then the bench's own setup through the API): ${idle.msToReady} ms; PostgreSQL: ${idle.pgMsToReady} ms.`,
    `- Idle RSS after set-up: default ${mb(idle.rss)} MB 2 s after the last instance was ready, ${mb(idle.rssLater)} MB 30 s later; PostgreSQL ${mb(idle.pgRss)} MB, then ${mb(idle.pgRssLater)} MB.`)
  for (const [who, prof] of Object.entries(profiles)) {
    if (prof === null) continue
    lines.push('', `## Where the time goes: ${who} (CPU profile of the main thread, self time)`, '', '| Function | self % |', '|---|---:|')
    for (const e of prof.top) lines.push(`| \`${e.fn}\` | ${e.pct.toFixed(1)} |`)
  }
  const file = path.join(here, 'RESULTS.md')
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const notes = previous.includes('<!-- notes -->') ? previous.slice(previous.indexOf('<!-- notes -->')) : ''
  fs.writeFileSync(file, lines.join('\n') + '\n' + (notes !== '' ? '\n' + notes : ''))
  console.log(lines.join('\n'))
}

await main()
process.exit(0)
