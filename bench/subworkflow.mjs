// A workflow that calls a sub-workflow (http_trigger -> execute_subworkflow -> response_node, the
// sub-workflow a draft proxy's http_trigger -> response_node), served by a built checkout:
//   node bench/subworkflow.mjs [checkout=this one] [embedded|postgres]
// Starts the checkout's service in this process with the default settings except the two logs
// (REQUEST_LOG_RETENTION_HOURS=0, LOG_LEVEL=warn, so the figure is the workflow's), sets the two
// proxies up through the management API, warms up 2 s, then `wrk -t1 -c50 -d5s`. Prints one JSON
// line: req/s, CPU µs per request of this process (all threads), non-2xx answers. To compare two
// builds, alternate runs of each on the same host (see ab.mjs for making the other checkout).
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createBenchDatabase, ensureTools } from './service-client.mjs'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(process.argv[2] ?? path.join(here, '..'))
const kind = process.argv[3] ?? 'embedded'
if (!['embedded', 'postgres'].includes(kind)) throw new Error('usage: node bench/subworkflow.mjs [checkout] [embedded|postgres]')
ensureTools()

const { loadConfig } = await import(path.join(root, 'dist/src/main/config/config.js'))
const { start } = await import(path.join(root, 'dist/src/main/server.js'))
const { createLogger } = await import(path.join(root, 'dist/src/main/logger.js'))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-subwf-'))
const env = { HOST: '127.0.0.1', PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn', REQUEST_LOG_RETENTION_HOURS: '0' }
const db = kind === 'postgres' ? await createBenchDatabase('gh_subwf') : null
if (db !== null) env.DATABASE_URL = db.url
const config = loadConfig(env)
// Runs cut off when the service closes after the load are logged as failures: keep them out of the output.
const service = await start(config, { logger: createLogger({ ...config, LOG_LEVEL: 'silent' }) })
const token = await service.issueToken('bench', 'admin')
const api = async (method, p, body) => {
  const r = await fetch(`http://127.0.0.1:${service.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const json = await r.json()
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(json)}`)
  return json
}
const node = (id, type, settings = {}) => ({ id, name: id, type, settings })
const c = await api('POST', '/collections', { name: 'subwf', base_path: '/subwf', upstream_url: 'http://127.0.0.1:9', auth_required: false })
const inner = await api('POST', '/proxies', { collection_id: c.id, name: 'inner', methods: ['GET'], path: '/inner', status: 'draft' })
await api('PUT', `/proxies/${inner.id}/workflow`, {
  workflow: { nodes: [node('in', 'http_trigger'), node('out', 'response_node', { status: 200, body: { value: '{{ trigger.n }}' } })], edges: [{ id: 'e', source: 'in', target: 'out' }] }
})
const outer = await api('POST', '/proxies', { collection_id: c.id, name: 'outer', methods: ['GET'], path: '/outer', status: 'published' })
await api('PUT', `/proxies/${outer.id}/workflow`, {
  enabled: true,
  workflow: {
    nodes: [node('t', 'http_trigger'), node('sub', 'execute_subworkflow', { workflow_id: inner.workflow_id, input: { n: 1 } }), node('r', 'response_node', { status: 200, body: '{{sub}}' })],
    edges: [{ id: 'e1', source: 't', target: 'sub' }, { id: 'e2', source: 'sub', target: 'r' }],
    runtime_settings: { save_on_success: false, save_on_error: false }
  }
})
const url = `http://127.0.0.1:${service.gatewayPort}/subwf/outer`
const first = await fetch(url)
if (first.status !== 200) throw new Error(`${url}: ${first.status} ${await first.text()}`)
await run('wrk', ['-t1', '-c50', '-d2s', url])
const cpu0 = process.cpuUsage()
const { stdout } = await run('wrk', ['-t1', '-c50', '-d5s', url])
const cpu = process.cpuUsage(cpu0)
const requests = Number(/(\d+) requests in/.exec(stdout)[1])
console.log(JSON.stringify({
  build: root, store: kind, rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1]),
  cpu_us_per_req: Math.round((cpu.user + cpu.system) / requests), non_2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0)
}))
await service.close()
await db?.drop()
fs.rmSync(dir, { recursive: true, force: true })
process.exit(0)
