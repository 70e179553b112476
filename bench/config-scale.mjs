// How configuration changes scale with the number of routes (issue: O(what changed)).
//
//   node bench/config-scale.mjs [embedded|postgres] [proxies=10000] [collections=1000]
//
// Starts the compiled service in this process the way `npm start` does (request log on), then
//   1. creates <collections> collections and <proxies> published proxies, one POST at a time, timing
//      each thousand (the goal: 10,000 in under 2 minutes);
//   2. changes one proxy 20 times (PUT) while a 1 ms timer on the gateway's thread records the longest
//      pause of its event loop during each change (the goal: < 5 ms at 10,000 routes), against the
//      same probe with no change;
//   3. times each change from the PUT until the gateway answers with the new target (the goal: < 50 ms).
// Run `npm run build` first. Prints one JSON object.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../dist/src/main/config/config.js'
import { start } from '../dist/src/main/server.js'
import { createLogger } from '../dist/src/main/logger.js'
import { createBenchDatabase } from './service-client.mjs'

const variant = process.argv[2] ?? 'embedded'
const N = Number(process.argv[3] ?? 10_000)
const C = Number(process.argv[4] ?? 1_000)

const backend = http.createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ url: req.url })) })
await new Promise(resolve => backend.listen(0, '127.0.0.1', resolve))
const upstream = `http://127.0.0.1:${backend.address().port}`

let dropDb = async () => {}
const env = { HOST: '127.0.0.1', GATEWAY_PORT: '0', MANAGEMENT_PORT: '0', LOG_LEVEL: 'warn' }
if (variant === 'postgres') {
  const db = await createBenchDatabase('gh_scale')
  env.DATABASE_URL = db.url
  dropDb = db.drop
} else {
  env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-scale-'))
}
const config = loadConfig(env)
const t0 = performance.now()
const service = await start(config, { logger: createLogger(config) })
const msToStart = Math.round(performance.now() - t0)
const token = await service.issueToken('bench', 'admin')
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

function request (port, method, urlPath, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, agent, headers: { ...headers, ...(data === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }) } }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', d => { text += d })
      res.on('end', () => resolve({ status: res.statusCode, text }))
    })
    req.on('error', reject)
    req.end(data)
  })
}
const api = async (method, p, body) => {
  const r = await request(service.managementPort, method, `/api/v1${p}`, body, { authorization: `Bearer ${token}` })
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.text}`)
  return r.text === '' ? null : JSON.parse(r.text)
}

// 1. collections and proxies, one POST at a time
const collections = []
const tc = performance.now()
for (let i = 0; i < C; i++) collections.push(await api('POST', '/collections', { name: `c${i}`, base_path: `/c${i}`, upstream_url: upstream, auth_required: false }))
const msCollections = Math.round(performance.now() - tc)
const perThousand = []
let tk = performance.now()
const tp = performance.now()
let last = null
for (let i = 0; i < N; i++) {
  last = await api('POST', '/proxies', { collection_id: collections[i % C].id, name: `p${i}`, methods: ['GET'], path: `/p${i}/{id}`, target_path: `/t${i}/{id}`, status: 'published' })
  if ((i + 1) % 1000 === 0) { const now = performance.now(); perThousand.push(Math.round(now - tk)); tk = now }
}
const msProxies = Math.round(performance.now() - tp)

// 2 and 3. changes at full size
let maxGap = 0
let lastTick = performance.now()
const probe = setInterval(() => { const now = performance.now(); maxGap = Math.max(maxGap, now - lastTick); lastTick = now }, 1)
const idleGaps = []
for (let i = 0; i < 20; i++) {
  maxGap = 0; lastTick = performance.now()
  await new Promise(resolve => setTimeout(resolve, 50))
  idleGaps.push(maxGap)
}
const changeGaps = []
const live = []
const puts = []
const target = last
const gwPath = `/${collections[(N - 1) % C].base_path.slice(1)}/p${N - 1}/1`
for (let i = 0; i < 20; i++) {
  await new Promise(resolve => setTimeout(resolve, 50))
  maxGap = 0; lastTick = performance.now()
  const t = performance.now()
  const p = await api('PUT', `/proxies/${target.id}`, { target_path: `/v${i}/{id}` })
  puts.push(performance.now() - t)
  for (let k = 0; k < 1000; k++) {
    const r = await request(service.gatewayPort, 'GET', gwPath)
    if (r.status === 200 && JSON.parse(r.text).url === `/v${i}/1`) break
    if (k === 999) throw new Error(`the change did not serve: ${r.status} ${r.text}`)
  }
  live.push(performance.now() - t)
  await new Promise(resolve => setTimeout(resolve, 20))
  changeGaps.push(maxGap)
  void p
}
clearInterval(probe)
const med = a => { const s = [...a].sort((x, y) => x - y); return Math.round(s[Math.floor(s.length / 2)] * 10) / 10 }
const max = a => Math.round(Math.max(...a) * 10) / 10
console.log(JSON.stringify({
  variant, proxies: N, collections: C, ms_to_start: msToStart,
  ms_collections: msCollections, ms_proxies: msProxies, ms_per_thousand_proxies: perThousand,
  loop_pause_ms_idle: { median: med(idleGaps), max: max(idleGaps) },
  loop_pause_ms_change: { median: med(changeGaps), max: max(changeGaps) },
  ms_change_live: { median: med(live), max: max(live) },
  ms_put: { median: med(puts), max: max(puts) },
  rss_mb: Math.round(process.memoryUsage().rss / 1048576)
}))
await service.close()
backend.close()
agent.destroy()
await dropDb()
if (env.DATA_DIR !== undefined) fs.rmSync(env.DATA_DIR, { recursive: true, force: true })
process.exit(0)
