/**
 * Every management MCP tool carries its category where an MCP client reads it
 * (`_meta["gatehouse/category"]` in tools/list), checked through the SDK's own Client over
 * streamable HTTP against the full service. A new operation whose category neither its path
 * nor its catalogue entry gives fails here, naming the tool and where to add it.
 */
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { OPERATIONS } from '../../../src/main/management/operation-catalogue.js'
import { CATEGORY_META, TOOL_CATEGORIES, categoryOf } from '../../../src/main/management/operation-category.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

t.setTimeout(300_000)

const MISSING = (name: string, where: string) =>
  `tool ${name} (${where}) has no category: give its entry in src/main/management/operation-catalogue.ts a category (one of ${TOOL_CATEGORIES.join(', ')}), or map its path in src/main/management/operation-category.ts`

t.test('every management MCP tool has a category an MCP client can read', async t => {
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t) }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${s.managementPort}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'category-check', version: '1.0.0' })
  await client.connect(transport)
  t.teardown(async () => { await client.close().catch(() => {}) })

  const { tools } = await client.listTools()
  t.ok(tools.length >= 57, `${tools.length} tools`)
  const byCategory = new Map<string, string[]>()
  for (const tool of tools) {
    const category = tool._meta?.[CATEGORY_META]
    t.ok(typeof category === 'string' && (TOOL_CATEGORIES as readonly string[]).includes(category), typeof category === 'string' ? `tool ${tool.name}: category ${category}` : MISSING(tool.name, 'tools/list'))
    byCategory.set(String(category), [...(byCategory.get(String(category)) ?? []), tool.name])
  }
  for (const c of TOOL_CATEGORIES) t.ok((byCategory.get(c) ?? []).length > 0, `category ${c} has tools`)
  const of = (name: string) => tools.find(x => x.name === name)?._meta?.[CATEGORY_META]
  t.equal(of('update_proxy_workflow'), 'workflows', "a proxy's workflow routes are workflows")
  t.equal(of('validate_proxy_workflow'), 'workflows')
  t.equal(of('get_proxy'), 'proxies')
  t.equal(of('create_profile'), 'profiles', "a client's profile routes are profiles")
  t.equal(of('set_client_status'), 'clients')
  t.equal(of('list_audit_logs'), 'audit_logs')
  t.equal(of('list_request_logs'), 'request_logs')
  t.equal(of('get_metrics'), 'metrics')
  t.ok(tools.find(x => x.name === 'get_profile_credentials')?._meta?.['gatehouse/secret_fields'] !== undefined, 'other _meta keys stay')

  // Tool schemas derive from the routes': the proxy field and the validation answer reach MCP clients.
  for (const name of ['create_proxy', 'update_proxy']) {
    t.match(tools.find(x => x.name === name)?.inputSchema.properties?.apply_parameter_defaults, { type: 'boolean' }, `${name} takes apply_parameter_defaults`)
  }
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as any
  const c = await call('create_collection', { name: 'cat', base_path: '/cat', upstream_url: 'http://127.0.0.1:9' })
  const p = await call('create_proxy', { collection_id: c.id, name: 'p', methods: ['GET'], path: '/p' })
  t.equal(p.apply_parameter_defaults, false)
  const checked = await call('validate_proxy_workflow', {
    id: p.id,
    workflow: {
      nodes: [{ id: 't', name: 't', type: 'http_trigger', settings: {} }, { id: 'f', name: 'f', type: 'http_request_node', settings: { url: 'http://127.0.0.1:9/', continue_on_error: true } }],
      edges: [{ id: 'e', source: 't', target: 'f' }]
    }
  })
  t.match(checked, { valid: true, status_rules: [{ node_id: 'f', rule: 'continue_on_error' }] }, 'validate_proxy_workflow says which rule handles a non-2xx answer')

  // Operations this service does not serve in this configuration have one too.
  for (const [key, info] of Object.entries(OPERATIONS)) {
    const [, path = ''] = key.split(' ')
    t.ok(categoryOf(path.split('/').filter(Boolean), info.category) !== undefined, MISSING(info.name, key))
  }
})
