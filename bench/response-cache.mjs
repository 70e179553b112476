// A cached hit against a plain forward, in one run: the compiled gateway (its own process, on one
// event loop, LOG_LEVEL warn) with two proxies to the same nginx backend (1 KiB JSON): /api/plain/1
// forwards every request, /api/cached/1 has `cache: {ttl_s: 3600}` and, after its first request,
// answers from the memory cache. wrk -t1 -c50, BENCH_DURATION (default 5s) per round, 3 rounds
// alternating the two; prints req/s, p99 and the gateway's CPU µs per request (/proc utime+stime
// of its process over the round, all threads). Run after `npm run build`:
//   node bench/response-cache.mjs
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

if (process.argv[2] === 'serve') {
  const [port, backendPort] = process.argv.slice(3).map(Number)
  const { loadConfig } = await import('../dist/src/main/config/config.js')
  const { createGateway } = await import('../dist/src/main/gateway/index.js')
  const { createLogger } = await import('../dist/src/main/logger.js')
  const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' })
  const gateway = createGateway({ config, logger: createLogger(config), readiness: async () => ({ ok: true, checks: {} }) })
  const now = new Date().toISOString()
  const collection = { id: 'bench', name: 'bench', description: '', base_path: '/api', upstream_url: `http://127.0.0.1:${backendPort}`, status: 'active', headers: [], auth_required: false, cors: null, version: 1, created_at: now, updated_at: now }
  const proxy = (id, path, cache) => ({
    id, collection_id: 'bench', name: id, description: '', methods: ['GET'], path, target_path: '/items/{id}', headers: [], parameters: [], request_schema: null,
    response_schema: null, streaming: false, status: 'published', workflow_enabled: false, workflow: null, workflow_id: `w-${id}`, timeout_ms: null,
    max_body_bytes: null, cache, compression: true, version: 1, created_at: now, updated_at: now
  })
  gateway.setRoutes([collection], [proxy('plain', '/plain/{id}', null), proxy('cached', '/cached/{id}', { ttl_s: 3600, vary: [], shared: false })])
  await gateway.listen()
  process.stdout.write('ready\n')
  process.on('SIGTERM', () => { gateway.close().then(() => process.exit(0)) })
} else {
  const { runWrk, startNginxBackend, ensureTools } = await import('./service-client.mjs')
  ensureTools()
  const here = path.dirname(fileURLToPath(import.meta.url))
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-bench-cache-'))
  const [gwPort, backendPort] = [18480 + (process.pid % 500), 19480 + (process.pid % 500)]
  const nginx = await startNginxBackend(work, backendPort)
  const gw = spawn(process.execPath, [path.join(here, 'response-cache.mjs'), 'serve', String(gwPort), String(backendPort)], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise(resolve => gw.stdout.once('data', resolve))
  const ticks = () => { const f = fs.readFileSync(`/proc/${gw.pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]) }
  const hz = 100
  const duration = process.env.BENCH_DURATION ?? '5s'
  const rounds = { plain: [], cached: [] }
  // Warm both (the cached proxy's first request stores its entry).
  runWrk(`http://127.0.0.1:${gwPort}/api/plain/1`, { duration: '1s' })
  runWrk(`http://127.0.0.1:${gwPort}/api/cached/1`, { duration: '1s' })
  for (let r = 0; r < 3; r++) {
    for (const name of r % 2 === 0 ? ['plain', 'cached'] : ['cached', 'plain']) {
      const t0 = ticks()
      const w = runWrk(`http://127.0.0.1:${gwPort}/api/${name}/1`, { duration })
      const cpuUs = (ticks() - t0) / hz * 1e6 / w.requests
      rounds[name].push({ ...w, cpuUs })
    }
  }
  const median = a => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
  console.log(`Run ${new Date().toISOString()}; uptime: ${os.loadavg().map(l => l.toFixed(1)).join(' ')}`)
  console.log('| Path | req/s | p99 ms | non-2xx | gateway CPU µs/req | rounds req/s |')
  console.log('|---|---:|---:|---:|---:|---|')
  for (const name of ['plain', 'cached']) {
    const rs = rounds[name]
    console.log(`| ${name === 'plain' ? 'plain forward' : 'cached hit'} | ${Math.round(median(rs.map(x => x.rps)))} | ${median(rs.map(x => x.p99)).toFixed(2)} | ${rs.reduce((n, x) => n + x.non2xx, 0)} | ${median(rs.map(x => x.cpuUs)).toFixed(1)} | ${rs.map(x => Math.round(x.rps)).join(', ')} |`)
  }
  gw.kill('SIGTERM')
  nginx.kill('SIGTERM')
}
