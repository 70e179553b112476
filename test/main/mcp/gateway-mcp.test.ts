/**
 * The gateway MCP at `/mcp` on the gateway listener, on a full service, driven by the SDK's own
 * client and by the MCP Inspector's command-line mode: profile authentication, tools scoped to the
 * profile's published proxies, execute_endpoint as a real gateway call counted by the profile's
 * rate limit, upstream errors as error results, session delete, and a session used on a second
 * instance through Redis.
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../../helpers/db.js'
import { GATEWAY_SERVER, startBackend } from '../../helpers/gateway.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'
import { retryUntil } from '../../helpers/wait.js'

const require = createRequire(import.meta.url)
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'cli', 'build', 'cli.js')

t.setTimeout(600_000)

interface Published { collectionId: string, itemId: string, missingId: string, draftId: string, clientId: string, profileId: string, key: string }

/** Over REST, as an operator would: an auth_required collection, two published proxies and a draft, a client whose api_key profile has a 3-call rate limit. */
async function publish (s: Service, backendUrl: string): Promise<Published> {
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const json = await r.json() as any
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(json)}`)
    return json
  }
  const c = await api('POST', '/collections', { name: 'catalogue', description: 'Products and stock', base_path: '/catalogue', upstream_url: backendUrl, auth_required: true })
  const item = await api('POST', '/proxies', { collection_id: c.id, name: 'get item', description: 'One item by id', methods: ['GET'], path: '/items/{id}', status: 'published' })
  const missing = await api('POST', '/proxies', { collection_id: c.id, name: 'missing', methods: ['GET'], path: '/missing', status: 'published' })
  const draft = await api('POST', '/proxies', { collection_id: c.id, name: 'unreleased', methods: ['GET'], path: '/secret', status: 'draft' })
  const pol = await api('POST', '/policies', { name: 'three', rate_limit: { requests: 3, per_seconds: 300 } })
  const cl = await api('POST', '/clients', { name: 'agent co' })
  const prof = await api('POST', `/clients/${cl.id}/profiles`, { name: 'agent', auth_type: 'api_key', collection_ids: [c.id], policy_id: pol.id })
  return { collectionId: c.id, itemId: item.id, missingId: missing.id, draftId: draft.id, clientId: cl.id, profileId: prof.id, key: prof.credentials.api_key }
}

const headersOf = (p: Published, key = p.key) => ({ authorization: `Bearer ${key}`, 'x-client-id': p.clientId, 'x-profile-id': p.profileId })

async function connect (url: string, headers: Record<string, string>): Promise<{ client: Client, transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  await client.connect(transport)
  return { client, transport }
}

const resultOf = (r: any) => JSON.parse(r.content[0].text)

t.test('an agent lists, describes and calls published APIs with its profile', async t => {
  const backend = await startBackend(t, (req, res) => {
    if (req.url?.startsWith('/missing')) { res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such thing"}'); return }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }))
  })
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const p = await publish(s, backend.url)
  const url = `http://127.0.0.1:${s.gatewayPort}/mcp`

  const { client, transport } = await connect(url, headersOf(p))
  const tools = (await client.listTools()).tools.map(x => x.name)
  t.same(tools.sort(), ['endpoint_details', 'execute_endpoint', 'list_collections', 'list_endpoints'])

  const collections = resultOf(await client.callTool({ name: 'list_collections', arguments: {} })).collections
  t.match(collections, [{ id: p.collectionId, name: 'catalogue', base_path: '/catalogue', description: 'Products and stock', endpoints: 2 }])
  const endpoints = resultOf(await client.callTool({ name: 'list_endpoints', arguments: { collection_id: p.collectionId } })).endpoints as any[]
  t.same(endpoints.map(e => e.name).sort(), ['get item', 'missing'], 'published proxies only: the draft is not listed')
  const draft = await client.callTool({ name: 'endpoint_details', arguments: { endpoint_id: p.draftId } })
  t.equal(draft.isError, true, 'a draft cannot be described either')

  const details = resultOf(await client.callTool({ name: 'endpoint_details', arguments: { endpoint_id: p.itemId } }))
  t.match(details, { path: '/catalogue/items/{id}', methods: ['GET'], parameters: [{ name: 'id', location: 'path' }] })
  t.match(details.example.curl, /x-profile-id/)

  const ok = await client.callTool({ name: 'execute_endpoint', arguments: { endpoint_id: p.itemId, path_params: { id: 'a1' }, query: { full: 'yes' } } })
  t.notOk(ok.isError)
  t.match(resultOf(ok), { status: 200, body: { path: '/items/a1?full=yes' } })
  t.match(backend.seen.at(-1), { method: 'GET', url: '/items/a1?full=yes' }, 'the backend received the real call')

  const upstream404 = await client.callTool({ name: 'execute_endpoint', arguments: { endpoint_id: p.missingId } })
  t.equal(upstream404.isError, true, 'an upstream 4xx is an error result')
  t.match(resultOf(upstream404), { status: 404, body: { message: 'no such thing' } })

  // The policy allows 3 calls: two are spent above, the third passes, the fourth is refused by the gateway.
  t.notOk((await client.callTool({ name: 'execute_endpoint', arguments: { endpoint_id: p.itemId, path_params: { id: 'a2' } } })).isError)
  const limited = await client.callTool({ name: 'execute_endpoint', arguments: { endpoint_id: p.itemId, path_params: { id: 'a3' } } })
  t.equal(limited.isError, true)
  t.match(resultOf(limited), { status: 429, headers: { 'retry-after': /\d+/ } }, 'execute_endpoint counts against the profile rate limit')
  t.equal(backend.seen.length, 3, 'the refused call never reached the backend')

  // The calls are in the request log under the profile, like any client call.
  const token = await s.issueToken!('alice', 'admin')
  const logged = async () => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/request-logs?profile_id=${p.profileId}&limit=50`, { headers: { authorization: `Bearer ${token}` } })
    return ((await r.json()) as any).items as any[]
  }
  const items = await retryUntil(logged, x => x.length >= 4, undefined, 100)
  t.same(items.map(x => x.status).sort(), [200, 200, 404, 429])

  // Ending the session: later calls with its id are refused.
  const sid = transport.sessionId!
  t.ok(sid)
  await transport.terminateSession()
  const after = await fetch(url, { method: 'POST', headers: { ...headersOf(p), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) })
  t.equal(after.status, 404, 'a deleted session is gone')
  await client.close()

  // A wrong key, an unknown profile, and a browser page from another site are refused before any session exists.
  const wrong = await fetch(url, { method: 'POST', headers: { ...headersOf(p, 'gh_wrong'), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) })
  t.equal(wrong.status, 401)
  t.match(await wrong.json(), { error: { code: 'unauthorized' } })
  await t.rejects(connect(url, { ...headersOf(p), 'x-profile-id': '00000000-0000-0000-0000-000000000000' }), 'an unknown profile cannot initialize')
  const foreign = await fetch(url, { method: 'POST', headers: { ...headersOf(p), origin: 'http://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
  t.equal(foreign.status, 403, 'a cross-site browser Origin is refused (DNS rebinding)')

  // A suspended client loses the MCP at once, like its gateway calls.
  const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/clients/${p.clientId}/status`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'suspended' }) })
  t.equal(r.status, 200)
  await t.rejects(connect(url, headersOf(p)), 'a suspended client cannot initialize')
})

t.test('the MCP Inspector CLI calls the gateway MCP', async t => {
  const backend = await startBackend(t, (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })) })
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const p = await publish(s, backend.url)
  const h = Object.entries(headersOf(p)).flatMap(([k, v]) => ['--header', `${k}: ${v}`])
  const cli = async (args: string[]) => await new Promise<{ code: number, out: string }>(resolve => {
    execFile(process.execPath, [INSPECTOR, '--cli', `http://127.0.0.1:${s.gatewayPort}/mcp`, '--transport', 'http', ...h, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? 1, out: stdout + stderr })
    })
  })
  const list = await cli(['--method', 'tools/list'])
  t.equal(list.code, 0, list.out.slice(0, 500))
  t.ok((JSON.parse(list.out).tools as any[]).some(x => x.name === 'execute_endpoint'))
  const call = await cli(['--method', 'tools/call', '--tool-name', 'execute_endpoint', '--tool-arg', `endpoint_id=${p.itemId}`, 'path_params={"id":"cli"}'])
  t.equal(call.code, 0, call.out.slice(0, 500))
  t.match(JSON.parse(JSON.parse(call.out).content[0].text), { status: 200, body: { path: '/items/cli' } })
})

t.test('a gateway MCP session opened on one instance is served by another (Redis)', async t => {
  const backend = await startBackend(t, (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })) })
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const mk = async () => await start(loadConfig({ GATEWAY_THREADS: '1', GATEWAY_SERVER,
    DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: dataDir, CONFIG_POLL_INTERVAL_MS: '100', WORKERS: '1', SECRETS_KEY: Buffer.alloc(32, 3).toString('base64')
  }), { logger: silentLogger, keyPrefix: prefix })
  const [a, b] = await Promise.all([mk(), mk()])
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const p = await publish(a, backend.url)

  const { client, transport } = await connect(`http://127.0.0.1:${a.gatewayPort}/mcp`, headersOf(p))
  const sid = transport.sessionId!
  const onB = async (body: unknown) => await fetch(`http://127.0.0.1:${b.gatewayPort}/mcp`, {
    method: 'POST',
    headers: { ...headersOf(p), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(body)
  })
  let listed: any
  for (let i = 0; i < 50; i++) {
    const r = await onB({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_endpoints', arguments: { collection_id: p.collectionId } } })
    if (r.status === 200) { listed = await r.json(); if (JSON.parse(listed.result.content[0].text).endpoints?.length === 2) break }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(JSON.parse(listed.result.content[0].text).endpoints.length, 2, 'instance B serves the session A opened, with the same view')
  await client.close()
})

t.test("execute_endpoint continues the agent's trace: its traceparent reaches the gateway call and the backend", async t => {
  const { startOtlpReceiver } = await import('../../helpers/otlp-receiver.js')
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const s = await start(loadConfig({
    GATEWAY_THREADS: '1',
    GATEWAY_SERVER, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50'
  }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const p = await publish(s, backend.url)
  const agent = { trace: '5b8aa5a2d2c872e8321cf37308d69df2', span: '051581bf3cb55c13' }
  const { client } = await connect(`http://127.0.0.1:${s.gatewayPort}/mcp`, { ...headersOf(p), traceparent: `00-${agent.trace}-${agent.span}-01` })
  const ok = await client.callTool({ name: 'execute_endpoint', arguments: { endpoint_id: p.itemId, path_params: { id: 'traced' } } })
  t.match(resultOf(ok), { status: 200 })
  await client.close()
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(backend.seen.at(-1)!.headers.traceparent))
  t.equal(m?.[1], agent.trace, "the backend is in the agent's trace")
  const spans = await receiver.waitFor(s => s.some(x => x.traceId === agent.trace && x.kind === 2), "the gateway call's server span")
  const server = spans.find(x => x.traceId === agent.trace && x.kind === 2)!
  t.equal(server.parentSpanId, agent.span, "the gateway call is a child of the agent's span")
  t.equal(server.attributes['http.route'], '/catalogue/items/{id}')
  t.ok(spans.some(x => x.traceId === agent.trace && x.parentSpanId === server.spanId && x.spanId === m![2]), "the backend's parent is the gateway's backend-call span")
})
