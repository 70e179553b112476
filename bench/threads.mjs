#!/usr/bin/env node
/**
 * GATEWAY_THREADS: the whole service (bench/service-server.mjs, embedded store, request log on)
 * with 1 and with 2 gateway threads, forwarding /open/items/{id} to an nginx backend on
 * 127.0.0.1; per round each setting once, the order rotating: `wrk -t1 -c50` GET for req/s,
 * and the CPU the service process spent per request (all its threads, from the service itself),
 * split by thread from /proc (Linux): the main thread (gateway thread 0 plus everything else it
 * runs: the request log, /metrics, the other threads' records and log lines), each gateway worker
 * thread, and the rest (the store's thread, libuv, V8's helpers). Prints a table and the load
 * average; a loaded host gives no quotable figure (record results from a quiet host).
 *   BENCH_ROUNDS (default 3), BENCH_DURATION (default 8s), BENCH_THREADS (default "1,2"),
 *   BENCH_PATH (default /open/items/1; /open/cached/1 is answered from the memory response cache,
 *   which gateway threads other than thread 0 ask the main thread for)
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, runWrk, startBenchService, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work', 'threads')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const SETTINGS = (process.env.BENCH_THREADS ?? '1,2').split(',').map(Number)
const PORTS = { backend: 18931, gateway: 18932 }
const PATH = process.env.BENCH_PATH ?? '/open/items/1'

ensureTools()
fs.mkdirSync(path.join(work, 'backend'), { recursive: true })
const backend = await startNginxBackend(path.join(work, 'backend'), PORTS.backend)
const results = Object.fromEntries(SETTINGS.map(n => [n, []]))
// CPU µs of each thread of a process, by thread id (utime + stime, clock ticks of 10 ms).
const threadCpu = pid => Object.fromEntries(fs.readdirSync(`/proc/${pid}/task`).map(tid => {
  let stat = ''
  try { stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8') } catch { return [tid, 0] }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return [tid, (Number(f[11]) + Number(f[12])) * 10_000]
}))
const loads = [os.loadavg()[0]]
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = SETTINGS.map((_, i) => SETTINGS[(i + round) % SETTINGS.length])
    for (const n of order) {
      const svc = await startBenchService(`threads-${n}`, {
        DATA_DIR: fs.mkdtempSync(path.join(work, `data-${n}-`)), PORT: String(PORTS.gateway), MANAGEMENT_PORT: '0', GATEWAY_THREADS: String(n)
      }, { work, backendPort: PORTS.backend })
      try {
        const url = `http://127.0.0.1:${svc.port}${PATH}`
        runWrk(url, { duration: '1s' }) // warm-up
        const before = (await svc.ask('cpu')).cpu_us
        const t0 = threadCpu(svc.proc.pid)
        const r = runWrk(url, { duration: DURATION })
        const t1 = threadCpu(svc.proc.pid)
        const cpu = ((await svc.ask('cpu')).cpu_us - before) / r.requests
        const rss = (await svc.ask('rss')).rss
        loads.push(os.loadavg()[0])
        // The main thread's id is the process id; the gateway worker threads are the busiest others.
        const per = tid => ((t1[tid] ?? 0) - (t0[tid] ?? 0)) / r.requests
        const main = per(String(svc.proc.pid))
        const others = Object.keys(t1).filter(tid => tid !== String(svc.proc.pid)).map(per).sort((a, b) => b - a)
        const workers = others.slice(0, n - 1)
        const rest = others.slice(n - 1).reduce((a, b) => a + b, 0)
        results[n].push({ ...r, cpu, rss, main, workers, rest })
        console.log(`round ${round + 1}, ${n} thread(s): ${Math.round(r.rps)} req/s, ${cpu.toFixed(1)} µs CPU/request (main thread ${main.toFixed(1)}${workers.map((w, i) => `, thread ${i + 1} ${w.toFixed(1)}`).join('')}, rest ${rest.toFixed(1)}), p99 ${r.p99.toFixed(2)} ms, RSS ${Math.round(rss / 1048576)} MB, load ${os.loadavg()[0].toFixed(1)}${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}`)
      } finally { await svc.stop() }
    }
  }
} finally { backend.kill('SIGTERM') }

const median = xs => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
console.log('\n| GATEWAY_THREADS | req/s (wrk -t1 -c50) | CPU µs per request | main thread | gateway worker threads | rest | p99 ms | RSS after, MB |\n|---|---|---|---|---|---|---|---|')
for (const n of SETTINGS) {
  const r = results[n]
  const workers = Array.from({ length: n - 1 }, (_, i) => median(r.map(x => x.workers[i] ?? 0)).toFixed(1)).join(' + ') || '-'
  console.log(`| ${n} | ${Math.round(median(r.map(x => x.rps)))} | ${median(r.map(x => x.cpu)).toFixed(1)} | ${median(r.map(x => x.main)).toFixed(1)} | ${workers} | ${median(r.map(x => x.rest)).toFixed(1)} | ${median(r.map(x => x.p99)).toFixed(2)} | ${Math.round(median(r.map(x => x.rss)) / 1048576)} |`)
}
console.log(`\nCPU per thread is µs per request of all requests (a thread serving half of them shows half its own cost). Load average (1 min) from ${loads[0].toFixed(2)} to ${loads.at(-1).toFixed(2)}, ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}, on ${os.availableParallelism()} cores.`)
