/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against both MCP surfaces
 * of a full service: its protocol-level server scenarios must pass, and the scenarios of
 * capabilities the servers do not declare must end in "method not found" (docs/mcp.md).
 *
 *   conformance CLI (Node 22) ──▶ relay (adds the credentials its client cannot send) ──▶ /api/v1/mcp or /mcp
 *
 * The suite and Node 22 come from scripts/test-services.sh (GATEHOUSE_TOOLS_DIR).
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { TOOLS_DIR } from '../../helpers/tools.js'

const TOOLS = TOOLS_DIR
const CLI = path.join(TOOLS, 'mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js')

/** Scenarios about the protocol itself (not about example tools or prompts a test server would carry). */
const PROTOCOL = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection']
/** Scenarios of capabilities neither server declares: "method not found" is the right answer. */
const UNDECLARED = ['logging-set-level', 'completion-complete', 'resources-list', 'resources-read-text', 'resources-read-binary', 'resources-templates-read', 'resources-subscribe', 'resources-unsubscribe']

t.setTimeout(900_000)

/** Forwards every request to `target`, adding `headers`; bodies and answers (SSE too) are streamed. */
async function relay (t: Test, target: string, headers: Record<string, string>): Promise<string> {
  const to = new URL(target)
  const server = http.createServer((req, res) => {
    const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: to.pathname + (req.url === '/' ? '' : req.url ?? ''), headers: { ...req.headers, ...headers } }, answer => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    up.on('error', () => { res.destroy() })
    req.pipe(up)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

interface Outcome { code: number, output: string, checks: Array<{ name?: string, status?: string, errorMessage?: string }> }

async function scenario (url: string, name: string): Promise<Outcome> {
  const out = mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'))
  try {
    const { code, output } = await new Promise<{ code: number, output: string }>(resolve => {
      execFile('npx', ['-y', 'node@22', CLI, 'server', '--url', url, '--scenario', name, '-o', out], { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1, output: stdout + stderr })
      })
    })
    const checks = findChecks(out)
    return { code, output, checks }
  } finally { rmSync(out, { recursive: true, force: true }) }
}

function findChecks (dir: string): Outcome['checks'] {
  const found: Outcome['checks'] = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.json')) continue
    const data = JSON.parse(readFileSync(path.join(entry.parentPath, entry.name), 'utf8')) as unknown
    if (Array.isArray(data)) found.push(...data as Outcome['checks'])
  }
  return found
}

async function service (t: Test): Promise<Service> {
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t) }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  return s
}

/** A published API and a client whose api_key profile may call it: what the gateway MCP needs. */
async function gatewayCredentials (t: Test, s: Service): Promise<Record<string, string>> {
  const backend = await startBackend(t)
  const token = await s.issueToken!('alice', 'admin')
  const api = async (p: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) })
    return await r.json() as any
  }
  const c = await api('/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url })
  await api('/proxies', { collection_id: c.id, name: 'items', methods: ['GET'], path: '/items', status: 'published' })
  const cl = await api('/clients', { name: 'agent' })
  const prof = await api(`/clients/${cl.id as string}/profiles`, { name: 'agent', auth_type: 'api_key', collection_ids: [c.id] })
  return { authorization: `Bearer ${prof.credentials.api_key as string}`, 'x-client-id': cl.id, 'x-profile-id': prof.id }
}

t.test('the MCP conformance suite against both surfaces', async t => {
  t.ok(existsSync(CLI), `the conformance suite is installed at ${CLI} (run scripts/test-services.sh)`)
  const s = await service(t)
  const surfaces = {
    management: await relay(t, `http://127.0.0.1:${s.managementPort}/api/v1/mcp`, { authorization: `Bearer ${await s.issueToken!('alice', 'admin')}` }),
    gateway: await relay(t, `http://127.0.0.1:${s.gatewayPort}/mcp`, await gatewayCredentials(t, s))
  }
  for (const [surface, url] of Object.entries(surfaces)) {
    for (const name of PROTOCOL) {
      const r = await scenario(url, name)
      const failed = r.checks.filter(c => c.status === 'FAILURE')
      t.ok(r.code === 0 && failed.length === 0 && r.checks.length > 0, `${surface}: ${name} passes`, { failed, output: r.output.slice(-3000) })
    }
    for (const name of UNDECLARED) {
      const r = await scenario(url, name)
      const failed = r.checks.filter(c => c.status === 'FAILURE')
      t.ok(failed.length > 0 && failed.every(c => /-32601|Method not found/i.test(c.errorMessage ?? '')),
        `${surface}: ${name} answers "method not found" (capability not declared)`, { checks: r.checks, output: r.output.slice(-2000) })
    }
  }
})
