// Runs the whole compiled service the way `npm start` does (start() with the environment's
// defaults: request log on, LOG_LEVEL info with one access line per request, workers = cores - 1)
// plus the variant's settings, and sets up, through the management API, the proxies the bench calls:
//   /open/items/{id}  an open collection forwarding to the bench backend
//   /auth/items/{id}  the same, with auth_required, an api_key profile and an enabled policy whose limit is never reached
//   /flow/items/{id}  a published proxy answering from its workflow: http_trigger -> set_node -> response_node
// With `setup: false` it sets nothing up (a second instance sharing the first one's database).
// Talks to the bench over fd 3 (one JSON line per answer; stdout carries the service's own logs):
// first {ready, headers, ms_to_ready}; then it answers each command line on stdin:
//   cpu                 -> {cpu_us}     process CPU time so far (all threads)
//   rss                 -> {rss}        resident set size, bytes
//   prof-start          -> {ok}         starts a CPU profile of the main thread (node:inspector)
//   prof-stop <file>    -> {ok}         writes it to <file>
//   create <n>          -> {proxy_id, path}  creates and publishes a proxy /c/p<n>, answers when the management API did
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import { loadConfig } from '../dist/src/main/config/config.js'
import { start } from '../dist/src/main/server.js'
import { createLogger } from '../dist/src/main/logger.js'
import { BENCH_WORKFLOW } from './workflow.mjs'

const t0 = performance.now()
const opts = JSON.parse(process.argv[2])
const out = fs.createWriteStream(null, { fd: 3 })
const say = (o) => { out.write(JSON.stringify(o) + '\n') }
if (opts.setup !== false) fs.rmSync(opts.env.DATA_DIR, { recursive: true, force: true })
const config = loadConfig({ HOST: '127.0.0.1', ...opts.env })
const service = await start(config, { logger: createLogger(config), keyPrefix: opts.keyPrefix })
const token = await service.issueToken('bench', 'admin')
const api = async (method, path, body) => {
  const r = await fetch(`http://127.0.0.1:${service.managementPort}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body)
  })
  const json = await r.json()
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`)
  return json
}
const upstream = `http://127.0.0.1:${opts.backendPort}`
const headers = [{ name: 'x-team', value: 'bench' }]
let ready = { headers: {} }
let scratch = null
if (opts.setup !== false) {
  const open = await api('POST', '/collections', { name: 'open', base_path: '/open', upstream_url: upstream, auth_required: false, headers })
  const paid = await api('POST', '/collections', { name: 'paid', base_path: '/auth', upstream_url: upstream, auth_required: true, headers })
  const flows = await api('POST', '/collections', { name: 'flows', base_path: '/flow', upstream_url: upstream, auth_required: false, headers })
  scratch = await api('POST', '/collections', { name: 'scratch', base_path: '/c', upstream_url: upstream, auth_required: false })
  for (const c of [open, paid, flows]) {
    await api('POST', '/proxies', { collection_id: c.id, name: 'items', methods: ['GET'], path: '/items/{id}', target_path: '/items/{id}', status: 'published' })
  }
  // /open/cached/{id}: answered from the response cache after its first request.
  await api('POST', '/proxies', { collection_id: open.id, name: 'cached', methods: ['GET'], path: '/cached/{id}', target_path: '/items/{id}', status: 'published', cache: { ttl_s: 3600, vary: [], shared: true } })
  const flowProxy = (await api('GET', `/proxies?collection_id=${flows.id}`)).items.find(p => p.collection_id === flows.id)
  await api('PUT', `/proxies/${flowProxy.id}/workflow`, { workflow: BENCH_WORKFLOW, enabled: true })
  const policy = await api('POST', '/policies', { name: 'huge', rate_limit: { requests: 1_000_000_000, per_seconds: 3600 }, quota: { requests: 1_000_000_000, period: 'month' } })
  const client = await api('POST', '/clients', { name: 'bench' })
  const profile = await api('POST', `/clients/${client.id}/profiles`, { name: 'key', auth_type: 'api_key', collection_ids: [paid.id], policy_id: policy.id })
  ready = { headers: { authorization: `Bearer ${profile.credentials.api_key}`, 'x-client-id': client.id, 'x-profile-id': profile.id } }
}
say({ ready: true, ...ready, gateway_port: service.gatewayPort, ms_to_start: Math.round(performance.now() - t0) })

let session = null
let buffered = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', d => {
  buffered += d
  let i
  while ((i = buffered.indexOf('\n')) >= 0) {
    const [cmd, arg] = buffered.slice(0, i).split(' ')
    buffered = buffered.slice(i + 1)
    handle(cmd, arg).then(say, err => say({ error: err.message }))
  }
})
async function handle (cmd, arg) {
  if (cmd === 'cpu') { const u = process.cpuUsage(); return { cpu_us: u.user + u.system } }
  if (cmd === 'rss') return { rss: process.memoryUsage().rss }
  if (cmd === 'prof-start') {
    session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
    return { ok: true }
  }
  if (cmd === 'prof-stop') {
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    fs.writeFileSync(arg, JSON.stringify(profile))
    return { ok: true }
  }
  if (cmd === 'create') {
    const p = await api('POST', '/proxies', { collection_id: scratch.id, name: `p${arg}`, methods: ['GET'], path: `/p${arg}`, target_path: '/items/1', status: 'published' })
    return { proxy_id: p.id, path: `/c/p${arg}` }
  }
  throw new Error(`unknown command ${cmd}`)
}
const stop = () => { service.close().then(() => process.exit(0), () => process.exit(1)) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
