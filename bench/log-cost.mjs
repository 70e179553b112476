// What each of the default start's two per-request logs costs: four services as `npm start` runs
// them with the request log and the access line each on or off, the same open proxy loaded by
// `wrk -t1 -c50 -d6s` in two rounds against a Node backend, then once more at equal load (each
// connection pausing 10 ms after every answer, as bench/run.mjs's "latency at equal load").
// Prints per variant the service's CPU µs per request (all threads), with PostgreSQL also the
// PostgreSQL server's CPU µs per request (every `postgres` process on the machine), req/s per
// round, and p99 at equal load. Run after `npm run build`:
//   node bench/log-cost.mjs             # embedded store (the default start)
//   node bench/log-cost.mjs postgres    # DATABASE_URL on the local PostgreSQL (BENCH_DATABASE_URL)
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createBenchDatabase, ensureTools, postgresCpuUs, runWrk, startBenchService } from './service-client.mjs'

const store = process.argv[2] ?? 'embedded'
if (store !== 'embedded' && store !== 'postgres') throw new Error('usage: node bench/log-cost.mjs [embedded|postgres]')
ensureTools()
const here = path.dirname(fileURLToPath(import.meta.url))
const work = path.join(here, '.work')
fs.mkdirSync(work, { recursive: true })
const paced = path.join(work, 'log-cost-paced.lua')
fs.writeFileSync(paced, 'function delay() return 10 end\n')
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
for (const [name, env] of Object.entries(VARIANTS)) {
  const id = `log-cost-${store}-${name.split(' ')[0]}`
  const db = store === 'postgres' ? await createBenchDatabase('gatehouse_log_cost') : undefined
  const svc = await startBenchService(id, { PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: path.join(work, id), ...(db !== undefined ? { DATABASE_URL: db.url } : {}), ...env }, { work, backendPort: BACKEND_PORT })
  runs[name] = { svc, db, cpu: [], pgCpu: [], rps: [], p99: 0 }
}
for (let round = 0; round < 2; round++) {
  for (const r of Object.values(runs)) {
    const c0 = (await r.svc.ask('cpu')).cpu_us
    const p0 = postgresCpuUs()
    const { requests } = runWrk(`http://127.0.0.1:${r.svc.port}/open/items/1`, { duration: '6s' })
    r.pgCpu.push((postgresCpuUs() - p0) / requests)
    r.cpu.push(((await r.svc.ask('cpu')).cpu_us - c0) / requests)
    r.rps.push(requests / 6)
  }
}
for (const r of Object.values(runs)) r.p99 = runWrk(`http://127.0.0.1:${r.svc.port}/open/items/1`, { duration: '6s', script: paced }).p99
console.log(`store: ${store}`)
for (const [name, r] of Object.entries(runs)) {
  const pg = store === 'postgres' ? `   PostgreSQL CPU µs/req ${r.pgCpu.map(x => x.toFixed(1)).join(', ')}` : ''
  console.log(`${name.padEnd(20)} CPU µs/req ${r.cpu.map(x => x.toFixed(1)).join(', ')}${pg}   req/s ${r.rps.map(x => x.toFixed(0)).join(', ')}   p99 at equal load ${r.p99.toFixed(2)} ms`)
  await r.svc.stop()
  await r.db?.drop()
}
backend.kill()
