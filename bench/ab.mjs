// A/B of two builds of the service, started as `npm start` runs them, against one nginx backend:
// alternating rounds (the order flips each round), so that a noisy host weighs on both alike.
// Each build must be built (`npm run build` in it); give the other one as a checkout, e.g. one
// made with `git worktree add /tmp/before <commit>` (node_modules linked or installed), then:
//   node bench/ab.mjs /tmp/before            # default start (embedded store, both logs): /open
//   node bench/ab.mjs /tmp/before redis      # PostgreSQL + CACHE_TYPE=redis: /open and /auth
// ROUNDS (default 6) and DURATION (default 5s) set the rounds. Prints per round and as medians:
// req/s and the service's CPU µs per request (all threads) of each build, and for `redis` the
// authenticated/open ratio of each build per round.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createBenchDatabase, ensureTools, runWrk, startBenchService, startNginxBackend } from './service-client.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const [other, variant = 'default'] = process.argv.slice(2)
if (other === undefined || !fs.existsSync(path.join(other, 'bench/service-client.mjs')) || !['default', 'redis'].includes(variant)) {
  throw new Error('usage: node bench/ab.mjs <other checkout, built> [default|redis]')
}
ensureTools()
const builds = { this: path.resolve(here, '..'), other: path.resolve(other) }
const ROUNDS = Number(process.env.ROUNDS ?? 6)
const DURATION = process.env.DURATION ?? '5s'
const BACKEND_PORT = 18952
const work = path.join(here, '.work', 'ab')
fs.rmSync(work, { recursive: true, force: true })
fs.mkdirSync(work, { recursive: true })
const nginx = await startNginxBackend(work, BACKEND_PORT)

const services = {}
const dbs = []
try {
  for (const [name, root] of Object.entries(builds)) {
    // Each build's own harness, so each runs its own dist/.
    const client = name === 'this' ? { startBenchService } : await import(path.join(root, 'bench/service-client.mjs'))
    const env = { PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: path.join(work, `data-${name}`) }
    if (variant === 'redis') {
      const db = await createBenchDatabase('gh_ab')
      dbs.push(db)
      Object.assign(env, { DATABASE_URL: db.url, CACHE_TYPE: 'redis' })
    }
    services[name] = await client.startBenchService(`ab-${name}`, env, { work, backendPort: BACKEND_PORT, keyPrefix: `gh-ab:${name}:${process.pid}:` })
  }
  const paths = variant === 'redis' ? ['open', 'auth'] : ['open']
  const results = {}
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['this', 'other'] : ['other', 'this']
    for (const name of order) {
      const svc = services[name]
      for (const p of paths) {
        const c0 = (await svc.ask('cpu')).cpu_us
        const r = runWrk(`http://127.0.0.1:${svc.port}/${p}/items/7`, { duration: DURATION, headers: p === 'auth' ? svc.headers : {} })
        const cpu = ((await svc.ask('cpu')).cpu_us - c0) / r.requests
        ;(results[`${name} ${p}`] ??= []).push({ rps: r.rps, cpu, non2xx: r.non2xx })
      }
    }
    console.log(`round ${round + 1}: ` + Object.entries(results).map(([k, v]) => `${k} ${Math.round(v[round].rps)} req/s ${v[round].cpu.toFixed(1)} µs`).join('; '))
  }
  const median = xs => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
  for (const [k, v] of Object.entries(results)) {
    console.log(`${k.padEnd(11)} median ${Math.round(median(v.map(x => x.rps)))} req/s, ${median(v.map(x => x.cpu)).toFixed(1)} µs CPU per request; non-2xx ${v.reduce((a, x) => a + x.non2xx, 0)}`)
  }
  for (const p of paths) {
    const lower = results[`this ${p}`].filter((x, i) => x.cpu < results[`other ${p}`][i].cpu).length
    console.log(`${p}: this build spent less CPU per request in ${lower} of ${ROUNDS} rounds`)
  }
  if (variant === 'redis') {
    for (const name of Object.keys(builds)) {
      const ratios = results[`${name} auth`].map((x, i) => x.rps / results[`${name} open`][i].rps)
      console.log(`${name}: authenticated / open per round ${ratios.map(x => x.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(2)}`)
    }
  }
} finally {
  for (const s of Object.values(services)) await s.stop().catch(() => {})
  for (const d of dbs) await d.drop().catch(() => {})
  nginx.kill('SIGTERM')
}
