#!/usr/bin/env node
/**
 * node bench/tracing.mjs: what tracing costs per forwarded request, in one run. Three gateways
 * (bench/gateway-server.mjs: one published proxy, no store, no request log) forward to an nginx
 * backend: tracing off (no OTEL endpoint), on at a 1 % ratio, on at 100 %, all exporting to a
 * loopback OTLP sink in its own process (answers 200 at once). wrk -t1 -c50 on each in turn, the
 * order rotating each round; per contender the median req/s and the gateway's CPU time per request
 * (utime + stime from /proc, which includes batching, encoding and posting the spans).
 * Prints a Markdown section for bench/RESULTS.md. BENCH_ROUNDS (default 5), BENCH_DURATION (8s).
 */
import { execSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, runWrk, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work-tracing')
fs.mkdirSync(work, { recursive: true })
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const DURATION = process.env.BENCH_DURATION ?? '8s'
const PORTS = { backend: 18911, sink: 18912, off: 18913, ratio1: 18914, all: 18915 }

ensureTools()
const backend = await startNginxBackend(work, PORTS.backend)
// The collector stand-in: reads each export whole and answers 200.
const sink = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.end()) }).listen(${PORTS.sink}, '127.0.0.1')`], { stdio: 'inherit' })
const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${PORTS.sink}` }
const contenders = [
  { name: 'tracing off', port: PORTS.off, env: {} },
  { name: 'on, 1 %', port: PORTS.ratio1, env: { ...endpoint, OTEL_TRACES_SAMPLER_ARG: '0.01' } },
  { name: 'on, 100 %', port: PORTS.all, env: { ...endpoint, OTEL_TRACES_SAMPLER_ARG: '1.0' } }
]
for (const c of contenders) {
  c.proc = spawn(process.execPath, [path.join(here, 'gateway-server.mjs'), String(c.port), String(PORTS.backend)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...c.env } })
  await new Promise(resolve => c.proc.stdout.once('data', resolve))
  c.runs = []
}

const TICK_US = 1e6 / Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }))
const cpuUs = pid => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * TICK_US }

for (const c of contenders) runWrk(`http://127.0.0.1:${c.port}/api/items/1`, { duration: '2s' }) // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < contenders.length; k++) {
    const c = contenders[(k + round) % contenders.length]
    const before = cpuUs(c.proc.pid)
    const r = runWrk(`http://127.0.0.1:${c.port}/api/items/1`, { duration: DURATION })
    // The exporter's timer runs on after the load: its last batches are counted with this run.
    await new Promise(resolve => setTimeout(resolve, 5500))
    c.runs.push({ ...r, cpuPerReq: (cpuUs(c.proc.pid) - before) / r.requests })
    process.stderr.write(`round ${round + 1} ${c.name}: ${Math.round(r.rps)} req/s, ${(c.runs.at(-1).cpuPerReq).toFixed(2)} µs CPU/request\n`)
  }
}
for (const c of contenders) { c.proc.kill('SIGTERM'); await new Promise(resolve => c.proc.once('exit', resolve)) }
sink.kill('SIGTERM')
backend.kill('SIGTERM')

const median = xs => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const off = contenders[0]
const offCpu = median(off.runs.map(r => r.cpuPerReq))
const lines = [
  `## Tracing cost per request (bench/tracing.mjs, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
  '',
  `Command: \`npm run build && node bench/tracing.mjs\` (${ROUNDS} rounds of wrk -t1 -c50 -d${DURATION}, order rotating). ` +
    `Load before the run: \`${os.loadavg().map(x => x.toFixed(2)).join(' ')}\` (uptime), ${os.availableParallelism()} cores shared by wrk, nginx, the sink and the gateway.`,
  '',
  '| contender | req/s (median) | p99 ms (median) | gateway CPU µs/request (median) | vs off |',
  '| --- | --- | --- | --- | --- |',
  ...contenders.map(c => {
    const cpu = median(c.runs.map(r => r.cpuPerReq))
    return `| ${c.name} | ${Math.round(median(c.runs.map(r => r.rps)))} | ${median(c.runs.map(r => r.p99)).toFixed(2)} | ${cpu.toFixed(2)} | ${c === off ? '—' : `${cpu - offCpu >= 0 ? '+' : ''}${(cpu - offCpu).toFixed(2)} µs`} |`
  }),
  '',
  'Per round (CPU µs/request): ' + contenders.map(c => `${c.name} ${c.runs.map(r => r.cpuPerReq.toFixed(2)).join(', ')}`).join('; ') + '.',
  ''
]
process.stdout.write(lines.join('\n') + '\n')
