// What each of the default start's two per-request logs costs: four services as `npm start` runs
// them (embedded store) with the request log and the access line each on or off, the same open
// proxy loaded by `wrk -t1 -c50 -d6s` in two rounds against a Node backend; prints the service's
// CPU µs per request (all threads) and req/s per round. Run after `npm run build`:
//   node bench/log-cost.mjs
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runWrk, startBenchService } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work')
fs.mkdirSync(work, { recursive: true })
const BACKEND_PORT = 18950
const backend = spawn(process.execPath, ['-e', `require('http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/json' }); s.end('x'.repeat(1024)) }).listen(${BACKEND_PORT}, '127.0.0.1')`], { stdio: 'inherit' })
await new Promise(resolve => setTimeout(resolve, 500))

const VARIANTS = {
  'both logs (default)': {},
  'request log only': { LOG_LEVEL: 'warn' },
  'access line only': { REQUEST_LOG_RETENTION_HOURS: '0' },
  'neither': { LOG_LEVEL: 'warn', REQUEST_LOG_RETENTION_HOURS: '0' }
}
const runs = {}
for (const [name, env] of Object.entries(VARIANTS)) runs[name] = { svc: await startBenchService(`log-cost-${name.split(' ')[0]}`, { PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: path.join(work, `log-cost-${name.split(' ')[0]}`), ...env }, { work, backendPort: BACKEND_PORT }), cpu: [], rps: [] }
for (let round = 0; round < 2; round++) {
  for (const r of Object.values(runs)) {
    const c0 = (await r.svc.ask('cpu')).cpu_us
    const { requests } = runWrk(`http://127.0.0.1:${r.svc.port}/open/items/1`, { duration: '6s' })
    r.cpu.push(((await r.svc.ask('cpu')).cpu_us - c0) / requests)
    r.rps.push(requests / 6)
  }
}
for (const [name, r] of Object.entries(runs)) {
  console.log(`${name.padEnd(20)} CPU µs/req ${r.cpu.map(x => x.toFixed(1)).join(', ')}   req/s ${r.rps.map(x => x.toFixed(0)).join(', ')}`)
  await r.svc.stop()
}
backend.kill()
