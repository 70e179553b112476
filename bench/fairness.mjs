#!/usr/bin/env node
/**
 * node bench/fairness.mjs (after npm run build): fairness across workflow proxies.
 * The whole service in-process (embedded store, WORKERS=1), two workflow proxies:
 *   /busy/spin   a code node spinning until its 1 s limit (max_concurrency 8, max_queue 8)
 *   /calm/hello  http_trigger -> response_node
 * First the trivial workflow alone (idle latency), then again while clients keep the
 * busy proxy's mailbox full (BUSY_CLIENTS concurrent loops; the overflow gets 503).
 * Prints p50/p99 of both phases and the ratio loaded/idle; only the ratio means
 * anything (everything shares the machine's cores). The goal: p99 within a few times idle.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../dist/src/main/config/config.js'
import { start } from '../dist/src/main/server.js'
import { createLogger } from '../dist/src/main/logger.js'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const BUSY_CLIENTS = Number(process.env.BENCH_BUSY_CLIENTS ?? 50)
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fair-'))
const config = loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', WORKERS: '1', REQUEST_LOG_RETENTION_HOURS: '0' })
const service = await start(config, { logger: createLogger(config) })
const token = await service.issueToken('bench', 'admin')
const api = async (method, p, body) => {
  const r = await fetch(`http://127.0.0.1:${service.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const json = await r.json()
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(json)}`)
  return json
}
const n = (id, type, settings = {}) => ({ id, name: id, type, settings })
const e = (source, target) => ({ id: `${source}-${target}`, source, target })
async function workflowProxy (base, p, nodes, runtime) {
  const c = await api('POST', '/collections', { name: base, base_path: `/${base}`, upstream_url: 'http://127.0.0.1:9', auth_required: false })
  const proxy = await api('POST', '/proxies', { collection_id: c.id, name: base, methods: ['GET'], path: p, status: 'published' })
  const edges = nodes.slice(1).map((x, i) => e(nodes[i].id, x.id))
  await api('PUT', `/proxies/${proxy.id}/workflow`, { enabled: true, workflow: { nodes, edges, runtime_settings: runtime } })
}
await workflowProxy('busy', '/spin', [n('trg', 'http_trigger'), n('spin', 'code_node', { code: 'while (true) {}' }), n('reply', 'response_node', { status: 200, body: 'done' })], { timeout_ms: 60_000, max_concurrency: 8, max_queue: 8 })
await workflowProxy('calm', '/hello', [n('trg', 'http_trigger'), n('reply', 'response_node', { status: 200, body: { hello: 'world' } })], {})
const g = `http://127.0.0.1:${service.gatewayPort}`

async function sample (count) {
  const ms = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    const r = await fetch(`${g}/calm/hello`)
    await r.arrayBuffer()
    if (r.status !== 200) throw new Error(`trivial workflow answered ${r.status}`)
    ms.push(performance.now() - t0)
  }
  ms.sort((a, b) => a - b)
  return { p50: ms[Math.floor(ms.length * 0.5)], p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] }
}

await sample(20) // warm-up: plan cache, connections
const idle = await sample(SAMPLES)
let running = true
const statuses = new Map()
const busyLoop = async () => {
  while (running) {
    const r = await fetch(`${g}/busy/spin`).catch(() => null)
    if (r === null) continue
    await r.arrayBuffer()
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    // A refused client waits as Retry-After asks (1 s); with 50 clients the mailbox stays full.
    if (r.status === 503) await new Promise(resolve => setTimeout(resolve, 1000 * Number(r.headers.get('retry-after') ?? 1)))
  }
}
const busy = Array.from({ length: BUSY_CLIENTS }, busyLoop)
await new Promise(resolve => setTimeout(resolve, 1000))
const loaded = await sample(SAMPLES)
running = false
await Promise.all(busy)
const f = x => x.toFixed(2)
console.log(`trivial workflow, idle:   p50 ${f(idle.p50)} ms, p99 ${f(idle.p99)} ms`)
console.log(`trivial workflow, loaded: p50 ${f(loaded.p50)} ms, p99 ${f(loaded.p99)} ms (${BUSY_CLIENTS} clients on the busy proxy)`)
console.log(`ratio loaded/idle: p50 ${f(loaded.p50 / idle.p50)}x, p99 ${f(loaded.p99 / idle.p99)}x`)
console.log(`busy proxy answers: ${[...statuses].map(([s, c]) => `${s}: ${c}`).join(', ')}`)
await service.close()
fs.rmSync(dataDir, { recursive: true, force: true })
