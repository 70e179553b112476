// Where the default start's CPU goes, native code and the kernel included (what a V8 CPU profile
// cannot see): `perf record -e cpu-clock` on the service (default start, both logs on) while
// `wrk -t1 -c50 -d8s` loads its open proxy against an nginx backend. Prints the share of each
// thread, the main thread's split by binary (kernel, node and V8, JIT-compiled JavaScript, libc,
// uWS) and the main thread's top symbols. Needs `perf` (linux-perf) and root or
// kernel.perf_event_paranoid <= 1; run after `npm run build`:
//   node bench/perf-threads.mjs            # default start
//   node bench/perf-threads.mjs logs-off   # REQUEST_LOG_RETENTION_HOURS=0, LOG_LEVEL=warn
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTools, startBenchService, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const variant = process.argv[2] ?? 'default'
if (!['default', 'logs-off'].includes(variant)) throw new Error('usage: node bench/perf-threads.mjs [default|logs-off]')
ensureTools()
execFileSync('perf', ['--version'], { stdio: 'ignore' })
const work = path.join(here, '.work', 'perf')
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(work, { recursive: true })
const BACKEND_PORT = 18953
const nginx = await startNginxBackend(work, BACKEND_PORT)
const env = { PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: path.join(work, 'data'), ...(variant === 'logs-off' ? { REQUEST_LOG_RETENTION_HOURS: '0', LOG_LEVEL: 'warn' } : {}) }
const svc = await startBenchService('perf', env, { work, backendPort: BACKEND_PORT })
try {
  const url = `http://127.0.0.1:${svc.port}/open/items/7`
  execFileSync('wrk', ['-t1', '-c50', '-d3s', url], { stdio: 'ignore' }) // warm-up
  const data = path.join(work, 'perf.data')
  const rec = spawn('perf', ['record', '-F', '1999', '-e', 'cpu-clock', '-p', String(svc.proc.pid), '-o', data, '--', 'sleep', '8'], { stdio: 'ignore' })
  const out = execFileSync('wrk', ['-t1', '-c50', '-d8s', url], { encoding: 'utf8' })
  await new Promise(resolve => rec.on('exit', resolve))
  const requests = Number(/(\d+) requests in/.exec(out)[1])
  const report = (...args) => execFileSync('perf', ['report', '-i', data, '--stdio', '-q', ...args], { encoding: 'utf8', maxBuffer: 1e8 })
    .split('\n').filter(l => l.trim() !== '').map(l => l.trim().split(/\s+/))
  const samples = Number(/# Samples: (\d+)/.exec(execFileSync('perf', ['report', '-i', data, '--stdio', '--header-only'], { encoding: 'utf8' }))?.[1] ??
    execFileSync('perf', ['report', '-i', data, '--stdio', '-q', '--sort', 'pid', '-n'], { encoding: 'utf8' }).split('\n').reduce((a, l) => a + (Number(l.trim().split(/\s+/)[1]) || 0), 0))
  const cpuUsPerRequest = samples / 1999 * 1e6 / requests
  console.log(`${variant}: ${requests} requests in 8 s, ${samples} samples at 1999 Hz: ${cpuUsPerRequest.toFixed(1)} µs of the service's CPU per request`)
  console.log('\nBy thread (the main thread is the gateway\'s event loop):')
  for (const [pct, who] of report('--sort', 'pid').slice(0, 8)) console.log(`  ${pct.padStart(7)}  ${who}${who.startsWith(`${svc.proc.pid}:`) ? '  (main)' : ''}`)
  console.log('\nMain thread, by binary (shares of all samples; `node` is Node.js and V8 in C++ and V8\'s built-ins):')
  const main = report('--sort', 'pid,dso').filter(row => row[1] === `${svc.proc.pid}:node`)
  for (const [pct, , ...dso] of main.slice(0, 8)) console.log(`  ${pct.padStart(7)}  ${dso.join(' ')}`)
  console.log('\nMain thread, top symbols:')
  for (const row of report('--sort', 'dso,symbol', '--tid', String(svc.proc.pid)).slice(0, 15)) console.log(`  ${row[0].padStart(7)}  ${row[1].padEnd(24)} ${row.slice(3).join(' ')}`)
} finally {
  await svc.stop()
  nginx.kill('SIGTERM')
}
