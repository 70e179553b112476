#!/usr/bin/env node
/**
 * GATEWAY_THREADS: the whole service (bench/service-server.mjs, embedded store, request log on)
 * with 1 and with 2 gateway threads, forwarding /open/items/{id} to an nginx backend on
 * 127.0.0.1; per round each setting once, the order rotating: `wrk -t1 -c50` GET for req/s,
 * and the CPU the service process spent per request (all its threads, from the service itself).
 * Prints a table; a loaded host gives no quotable figure (record results from a quiet host).
 *   BENCH_ROUNDS (default 3), BENCH_DURATION (default 8s), BENCH_THREADS (default "1,2")
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, runWrk, startBenchService, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work', 'threads')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const SETTINGS = (process.env.BENCH_THREADS ?? '1,2').split(',').map(Number)
const PORTS = { backend: 18931, gateway: 18932 }

ensureTools()
fs.mkdirSync(path.join(work, 'backend'), { recursive: true })
const backend = await startNginxBackend(path.join(work, 'backend'), PORTS.backend)
const results = Object.fromEntries(SETTINGS.map(n => [n, []]))
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = SETTINGS.map((_, i) => SETTINGS[(i + round) % SETTINGS.length])
    for (const n of order) {
      const svc = await startBenchService(`threads-${n}`, {
        DATA_DIR: fs.mkdtempSync(path.join(work, `data-${n}-`)), PORT: String(PORTS.gateway), MANAGEMENT_PORT: '0', GATEWAY_THREADS: String(n)
      }, { work, backendPort: PORTS.backend })
      try {
        const url = `http://127.0.0.1:${svc.port}/open/items/1`
        runWrk(url, { duration: '1s' }) // warm-up
        const before = (await svc.ask('cpu')).cpu_us
        const r = runWrk(url, { duration: DURATION })
        const cpu = ((await svc.ask('cpu')).cpu_us - before) / r.requests
        const rss = (await svc.ask('rss')).rss
        results[n].push({ ...r, cpu, rss })
        console.log(`round ${round + 1}, ${n} thread(s): ${Math.round(r.rps)} req/s, ${cpu.toFixed(1)} µs CPU/request, p99 ${r.p99.toFixed(2)} ms, RSS ${Math.round(rss / 1048576)} MB${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}`)
      } finally { await svc.stop() }
    }
  }
} finally { backend.kill('SIGTERM') }

const median = xs => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
console.log('\n| GATEWAY_THREADS | req/s (wrk -t1 -c50) | CPU µs per request | p99 ms | RSS after, MB |\n|---|---|---|---|---|')
for (const n of SETTINGS) {
  const r = results[n]
  console.log(`| ${n} | ${Math.round(median(r.map(x => x.rps)))} | ${median(r.map(x => x.cpu)).toFixed(1)} | ${median(r.map(x => x.p99)).toFixed(2)} | ${Math.round(median(r.map(x => x.rss)) / 1048576)} |`)
}
