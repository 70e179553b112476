// Runs the whole compiled service (embedded store, memory cache, one worker thread) and sets up,
// through the management API, the proxies the access and workflow benchmarks call:
//   /open/items/{id}  an open collection forwarding to the bench backend
//   /auth/items/{id}  the same, with auth_required, an api_key profile and an enabled policy whose limit is never reached
//   /flow/items/{id}  a published proxy answering from its workflow: http_trigger -> set_node -> response_node
// Prints one JSON line with what wrk must send, then serves until SIGTERM; each line `cpu` on stdin
// is answered with the process's CPU time so far (all threads, microseconds), so the bench can
// report CPU per request, which other load on the machine disturbs far less than req/s.
import fs from 'node:fs'
import { loadConfig } from '../dist/src/main/config/config.js'
import { start } from '../dist/src/main/server.js'
import { createLogger } from '../dist/src/main/logger.js'
import { BENCH_WORKFLOW } from './workflow.mjs'

const [port, managementPort, backendPort, dataDir] = process.argv.slice(2)
fs.rmSync(dataDir, { recursive: true, force: true })
// The request log is off so that the ratios measure authentication and limits, not database writes.
const config = loadConfig({
  PORT: port, HOST: '127.0.0.1', MANAGEMENT_PORT: managementPort, DATA_DIR: dataDir, LOG_LEVEL: 'warn', WORKERS: '1',
  CACHE_TYPE: 'memory', REQUEST_LOG_RETENTION_HOURS: '0'
})
const service = await start(config, { logger: createLogger(config) })
const token = await service.issueToken('bench', 'admin')
const api = async (method, path, body) => {
  const r = await fetch(`http://127.0.0.1:${service.managementPort}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body)
  })
  const json = await r.json()
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`)
  return json
}
const upstream = `http://127.0.0.1:${backendPort}`
const headers = [{ name: 'x-team', value: 'bench' }]
const open = await api('POST', '/collections', { name: 'open', base_path: '/open', upstream_url: upstream, auth_required: false, headers })
const paid = await api('POST', '/collections', { name: 'paid', base_path: '/auth', upstream_url: upstream, auth_required: true, headers })
const flows = await api('POST', '/collections', { name: 'flows', base_path: '/flow', upstream_url: upstream, auth_required: false, headers })
for (const c of [open, paid, flows]) {
  await api('POST', '/proxies', { collection_id: c.id, name: 'items', methods: ['GET'], path: '/items/{id}', target_path: '/items/{id}', status: 'published' })
}
const flowProxy = (await api('GET', `/proxies?collection_id=${flows.id}`)).items.find(p => p.collection_id === flows.id)
await api('PUT', `/proxies/${flowProxy.id}/workflow`, { workflow: BENCH_WORKFLOW, enabled: true })
const policy = await api('POST', '/policies', { name: 'huge', rate_limit: { requests: 1_000_000_000, per_seconds: 3600 }, quota: { requests: 1_000_000_000, period: 'month' } })
const client = await api('POST', '/clients', { name: 'bench' })
const profile = await api('POST', `/clients/${client.id}/profiles`, { name: 'key', auth_type: 'api_key', collection_ids: [paid.id], policy_id: policy.id })
process.stdout.write(JSON.stringify({
  headers: { authorization: `Bearer ${profile.credentials.api_key}`, 'x-client-id': client.id, 'x-profile-id': profile.id }
}) + '\n')
process.stdin.setEncoding('utf8')
process.stdin.on('data', d => {
  for (const cmd of d.split('\n')) if (cmd === 'cpu') { const u = process.cpuUsage(); process.stdout.write(JSON.stringify({ cpu_us: u.user + u.system }) + '\n') }
})
const stop = () => { service.close().then(() => process.exit(0), () => process.exit(1)) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
