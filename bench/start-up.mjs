// Start-up time and idle memory of the service as `npm start` runs it (after its build step):
// `node dist/src/main/index.js` with a fresh DATA_DIR each time, timed from spawn until GET /readyz
// answers 200, then its resident memory after 5 s idle. Also with DATABASE_URL (PostgreSQL).
//
//   npm run build && node bench/start-up.mjs [rounds=3]
//
// Prints one JSON object: per variant, the milliseconds to ready and the idle RSS (MB) of each round.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const rounds = Number(process.argv[2] ?? 3)

const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer()
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  s.on('error', reject)
})
const rssMb = pid => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? null : Math.round(Number(m[1]) / 1024)
}

async function once (extraEnv) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-startup-'))
  const [port, mport] = [await freePort(), await freePort()]
  const t0 = performance.now()
  const proc = spawn(process.execPath, [path.join(root, 'dist/src/main/index.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), MANAGEMENT_PORT: String(mport), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  let ms = null
  for (let i = 0; i < 3000 && proc.exitCode === null; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
    if (r !== null && r.status === 200) { ms = Math.round(performance.now() - t0); break }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  await new Promise(resolve => setTimeout(resolve, 5000))
  const rss = proc.exitCode === null ? rssMb(proc.pid) : null
  proc.kill('SIGTERM')
  await new Promise(resolve => proc.exitCode !== null ? resolve() : proc.on('exit', resolve))
  fs.rmSync(dataDir, { recursive: true, force: true })
  return { ms_to_ready: ms, idle_rss_mb: rss }
}

async function postgresUrl () {
  const { default: pg } = await import('pg')
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const name = `gh_startup_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const c = new pg.Client({ connectionString: admin }); await c.connect(); await c.query(`CREATE DATABASE ${name}`); await c.end()
  const url = new URL(admin); url.pathname = `/${name}`
  return { url: url.toString(), drop: async () => { const d = new pg.Client({ connectionString: admin }); await d.connect(); await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`); await d.end() } }
}

const out = { embedded: [], postgres: [] }
for (let r = 0; r < rounds; r++) {
  out.embedded.push(await once({}))
  const db = await postgresUrl()
  try { out.postgres.push(await once({ DATABASE_URL: db.url })) } finally { await db.drop() }
}
console.log(JSON.stringify(out))
