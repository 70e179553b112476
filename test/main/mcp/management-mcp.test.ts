/**
 * The management MCP as an agent meets it, through the SDK's own client against the full
 * service: initialize, tools and prompts, calls that change records (with their events and
 * audit entries), a role refused, progress of a streaming tool, session end, the refusals at
 * the door (gateway headers, foreign Origin), and one session served by two instances that
 * share Redis.
 */
import http from 'node:http'
import t, { type Test } from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger } from '../../helpers/db.js'
import { REDIS_URL, uniquePrefix } from '../cache/shared.js'

const NAMED = ['workflow_test_workflow_stream', 'workflow_trigger_test_listen', 'workflow_trigger_test_stream', 'workflow_list_nodes', 'workflow_test_node',
  'update_proxy_workflow', 'validate_proxy_workflow', 'execute_workflow_partial', 'list_workflow_versions', 'restore_workflow_version']

async function service (t: Test, env: Record<string, string>, dataDir?: string): Promise<Service> {
  const s = await start(loadConfig({
    GATEWAY_THREADS: '1',
    PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', CONFIG_POLL_INTERVAL_MS: '200',
    DATA_DIR: dataDir ?? await createTempDir(t), ...env
  }), { logger: silentLogger, keyPrefix: uniquePrefix('mcp') })
  t.teardown(async () => { await s.close() })
  return s
}

const mcpUrl = (s: Service) => new URL(`http://127.0.0.1:${s.managementPort}/api/v1/mcp`)

async function connect (t: Test, s: Service, token: string, sessionId?: string): Promise<{ client: Client, transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(s), { requestInit: { headers: { authorization: `Bearer ${token}` } }, sessionId })
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(async () => { await client.close().catch(() => {}) })
  return { client, transport }
}

const json = (r: any) => JSON.parse(r.content[0].text)

// Three full services start here (one with PostgreSQL and Redis): slow on a loaded machine.
t.setTimeout(600_000)

t.test('the management MCP through the SDK client', async t => {
  const s = await service(t, { DATABASE_URL: '', CACHE_TYPE: 'memory' })
  const admin = await s.issueToken!('alice', 'admin')
  const viewer = await s.issueToken!('victor', 'viewer')
  const { client, transport } = await connect(t, s, admin)
  t.match(transport.sessionId, /^[0-9a-f-]{36}$/, 'initialize answers an Mcp-Session-Id')
  t.equal(client.getServerVersion()?.name, 'gatehouse-management')

  const { tools } = await client.listTools()
  t.ok(tools.length >= 57, `at least 57 tools (${tools.length})`)
  for (const name of NAMED) t.ok(tools.some(x => x.name === name), `tool ${name}`)
  const create = tools.find(x => x.name === 'create_collection')!
  t.match(create.inputSchema, { type: 'object', required: ['name', 'base_path'], properties: { base_path: { type: 'string' }, upstream: { type: 'object' } } }, "input schema is the route's body schema")
  t.match(tools.find(x => x.name === 'get_profile')!.inputSchema.required, ['client_id', 'id'], 'path parameters are arguments')

  const nodes = json(await client.callTool({ name: 'workflow_list_nodes', arguments: {} }))
  const cond = nodes.items.find((n: any) => n.type === 'condition_node')
  t.match(cond, { requires_source_handle: true, supported_source_handles: ['true', 'false'] }, 'edge-authoring hints')
  for (const k of ['entry_trigger', 'terminal_node', 'default_source_handle', 'dynamic_source_handles', 'wiring_hint']) t.ok(k in cond, `hint ${k}`)

  // A change through MCP: the same record, event and audit entry as REST, marked mcp.
  const created = await client.callTool({ name: 'create_collection', arguments: { name: 'billing', base_path: '/billing', upstream_url: 'http://127.0.0.1:9' } })
  t.notOk(created.isError)
  const collection = json(created)
  t.match(collection, { name: 'billing', base_path: '/billing', status: 'active' })
  const rest = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1/collections/${collection.id}`, { headers: { authorization: `Bearer ${admin}`, connection: 'close' } })
  t.equal(rest.status, 200, 'the collection exists for REST too')
  const dumped = json(await client.callTool({ name: 'dump_config', arguments: {} }))
  t.match(dumped, { format_version: 1, collections: [{ name: 'billing', base_path: '/billing', proxies: [] }] }, 'dump_config answers the configuration file as JSON')

  const invalid = await client.callTool({ name: 'create_collection', arguments: { name: 'x', base_path: 'nope' } })
  t.equal(invalid.isError, true)
  t.match(json(invalid), { error: { code: 'validation_failed', details: [{ field: 'upstream_url', message: 'is required unless upstream.targets is given' }] }, status: 400 }, 'every problem, as REST reports it')

  const proxy = json(await client.callTool({ name: 'create_proxy', arguments: { collection_id: collection.id, name: 'echo', methods: ['POST'], path: '/echo' } }))
  const saved = await client.callTool({
    name: 'update_proxy_workflow',
    arguments: {
      id: proxy.id,
      workflow: {
        nodes: [
          { id: 'in', name: 'in', type: 'http_trigger', settings: {} },
          { id: 'greet', name: 'greet', type: 'set_node', settings: { values: { hello: 'world' } } },
          { id: 'out', name: 'out', type: 'response_node', settings: { status: 200, body: '{{greet.output}}' } }
        ],
        edges: [{ id: 'e1', source: 'in', target: 'greet' }, { id: 'e2', source: 'greet', target: 'out' }]
      }
    }
  })
  t.notOk(saved.isError, 'workflow saved')
  const versions = json(await client.callTool({ name: 'list_workflow_versions', arguments: { workflow_id: proxy.workflow_id } }))
  t.equal(versions.items.length, 1)

  // Progress of a streaming tool: one notification per node event, then the execution record.
  const progress: string[] = []
  const run = await client.callTool({ name: 'workflow_test_workflow_stream', arguments: { workflow_id: proxy.workflow_id, input: { body: {} } } }, undefined,
    { onprogress: p => { progress.push(p.message ?? '') }, timeout: 120_000 })
  t.notOk(run.isError, JSON.stringify(run.content))
  t.equal(json(run).status, 'success')
  t.ok(progress.length >= 3, `progress notifications (${progress.join(' | ')})`)
  t.ok(progress.some(m => m.includes('greet')), 'progress names the nodes')

  // A role refused: the REST route's role check runs on the tool call.
  const v = await connect(t, s, viewer)
  const refused = await v.client.callTool({ name: 'delete_collection', arguments: { id: collection.id } })
  t.equal(refused.isError, true)
  t.match(json(refused), { error: { code: 'forbidden' }, status: 403 })
  t.equal(json(await v.client.callTool({ name: 'get_collection', arguments: { id: collection.id } })).id, collection.id, 'a viewer may read')

  const audit = json(await client.callTool({ name: 'list_audit_logs', arguments: { source: 'mcp', order: 'asc' } }))
  t.match(audit.items.map((e: any) => [e.action, e.resource_kind, e.actor_sub, e.method]), [
    ['create', 'collection', 'alice', 'POST'],
    ['create', 'proxy', 'alice', 'POST'],
    ['update', 'proxy_workflow', 'alice', 'PUT'],
    ['denied', 'collection', 'victor', 'DELETE']
  ], 'audit entries marked mcp, with the REST path')
  t.equal(audit.items[0].path, '/api/v1/collections')

  // Prompts.
  const { prompts } = await client.listPrompts()
  t.same(prompts.map(p => p.name).sort(), ['build_workflow', 'diagnose_failing_proxy', 'publish_api_from_openapi'])
  const prompt = await client.getPrompt({ name: 'diagnose_failing_proxy', arguments: { proxy_id: proxy.id } })
  t.match((prompt.messages[0]?.content as { text: string } | undefined)?.text, proxy.id)

  // Session end: DELETE, after which the id is unknown.
  const id = transport.sessionId!
  await transport.terminateSession()
  const after = await fetch(mcpUrl(s), {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', connection: 'close' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  })
  t.equal(after.status, 404, 'a deleted session is gone')
})

t.test('refusals at the door', async t => {
  const s = await service(t, { DATABASE_URL: '', CACHE_TYPE: 'memory', MCP_SESSIONS_PER_USER: '2' })
  const admin = await s.issueToken!('alice', 'admin')
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
  const post = async (headers: Record<string, string>, body: unknown = init) => await fetch(mcpUrl(s), {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close', ...headers }, body: JSON.stringify(body)
  })
  t.equal((await post({})).status, 401, 'no token')
  const withGatewayHeaders = await post({ authorization: `Bearer ${admin}`, 'x-client-id': 'c1', 'x-profile-id': 'p1' })
  t.equal(withGatewayHeaders.status, 401, 'gateway headers are refused')
  t.match(await withGatewayHeaders.text(), 'X-Client-ID')
  t.equal((await post({ authorization: `Bearer ${admin}`, origin: 'http://evil.example' })).status, 403, 'a foreign Origin is refused')
  // fetch cannot set Host: a plain node:http request can.
  const rebound = await new Promise<number>((resolve, reject) => {
    const req = http.request(mcpUrl(s), { method: 'POST', headers: { host: 'evil.example', authorization: `Bearer ${admin}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close' } }, res => { res.resume(); resolve(res.statusCode!) })
    req.on('error', reject)
    req.end(JSON.stringify(init))
  })
  t.equal(rebound, 403, 'a non-loopback Host is refused (DNS rebinding)')

  const ok = await post({ authorization: `Bearer ${admin}` })
  t.equal(ok.status, 200)
  const first = ok.headers.get('mcp-session-id')!
  t.match(await ok.text(), '"protocolVersion":"2025-06-18"', 'the requested supported version is negotiated')
  const list = await post({ authorization: `Bearer ${admin}`, 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' })
  t.equal(list.status, 200)
  await list.text()
  t.equal((await post({ authorization: `Bearer ${admin}` }, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).status, 400, 'calls need a session')
  const other = await s.issueToken!('mallory', 'admin')
  t.equal((await post({ authorization: `Bearer ${other}`, 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).status, 404, "another user's session is not found")

  // Bounded per user: the third session of alice closes her least recently used one.
  for (let i = 0; i < 2; i++) await (await post({ authorization: `Bearer ${admin}` })).text()
  t.equal((await post({ authorization: `Bearer ${admin}`, 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).status, 404, 'the oldest session was closed')
})

t.test('one session across two instances through Redis', async t => {
  const url = await createTestDatabase(t)
  const dataDir = await createTempDir(t) // one local issuer key: both instances accept the same token
  const env = { DATABASE_URL: url, CACHE_TYPE: 'redis', REDIS_URL }
  const prefix = uniquePrefix('mcp-two')
  const mk = async () => {
    const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: dataDir, ...env }), { logger: silentLogger, keyPrefix: prefix })
    t.teardown(async () => { await s.close() })
    return s
  }
  const a = await mk()
  const b = await mk()
  const token = await a.issueToken!('alice', 'editor')
  const onA = await connect(t, a, token)
  const sessionId = onA.transport.sessionId!
  const created = json(await onA.client.callTool({ name: 'create_collection', arguments: { name: 'shared', base_path: '/shared', upstream_url: 'http://127.0.0.1:9' } }))

  // The same session id, carried to the other instance (no initialize there).
  const onB = new StreamableHTTPClientTransport(mcpUrl(b), { requestInit: { headers: { authorization: `Bearer ${token}` } }, sessionId })
  const clientB = new Client({ name: 'gatehouse-test-b', version: '1.0.0' })
  // connect() skips initialize when the transport already has a session id.
  await clientB.connect(onB)
  t.teardown(async () => { await clientB.close().catch(() => {}) })
  const got = await clientB.callTool({ name: 'get_collection', arguments: { id: created.id } })
  t.notOk(got.isError)
  t.equal(json(got).name, 'shared', 'instance B serves the session opened on A')
  await onB.terminateSession()
  const again = await onA.client.callTool({ name: 'list_collections', arguments: {} }).then(() => 'ok', (err: Error) => err.message)
  t.not(again, 'ok', 'ended on B, the session is gone on A too')
})
