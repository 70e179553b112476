import t, { type Test } from 'tap'
import type { Proxy } from '../../../src/common/types.js'
import { exportCollections } from '../../../src/main/collections-io/export-file.js'
import { parseImportFile } from '../../../src/main/collections-io/import-file.js'
import { collectionRecord, proxyRecords } from './records.js'

const workflow: NonNullable<Proxy['workflow']> = {
  nodes: [
    { id: 'n1', name: 'trigger', type: 'http_trigger', settings: {}, position: { x: 0, y: 0 } },
    { id: 'n2', name: 'lookup', type: 'http_request_node', settings: { method: 'GET', url: 'https://api.example.com/{{trigger.params.id}}', credentials_id: 'cred_9', timeout_ms: 5000 } },
    { id: 'n3', name: 'answer', type: 'response_node', settings: { status: 200, body: '{{lookup.response.body}}' } }
  ],
  edges: [
    { id: 'e1', source: 'n1', target: 'n2' },
    { id: 'e2', source: 'n2', target: 'n3', sourceHandle: null }
  ],
  runtime_settings: { timeout_ms: 30000, save_on_success: false, save_on_error: true }
}

const billing = collectionRecord({
  name: 'Billing',
  description: 'Invoices',
  base_path: '/billing',
  upstream_url: 'https://billing.internal:8443/v1',
  headers: [{ name: 'x-team', value: 'payments' }, { name: 'x-api-key', env: 'BILLING_KEY' }],
  auth_required: false,
  cors: { allow_origins: ['https://app.example.com'], allow_methods: ['GET'], allow_headers: [], expose_headers: ['x-total'], allow_credentials: true, max_age_s: 60 },
  status: 'disabled'
})
const billingProxies = proxyRecords([
  {
    name: 'invoice',
    description: 'One invoice',
    methods: ['GET', 'DELETE'],
    path: '/invoices/{id}',
    target_path: '/api/invoices/{id}',
    headers: [{ name: 'x-proxy', value: 'static' }],
    parameters: [{ name: 'id', location: 'path', type: 'integer', required: true, description: 'Invoice id' }],
    response_schema: { type: 'object', properties: { id: { type: 'integer' } } },
    status: 'published',
    workflow_enabled: true,
    workflow,
    timeout_ms: 15000
  },
  { name: 'stream', path: '/events/*', target_path: '/events/*', streaming: true }
])
const items = [
  { collection: billing, proxies: billingProxies },
  { collection: collectionRecord({ name: 'Empty', base_path: '/empty' }, 'col_2'), proxies: [] }
]

t.test('the export file holds configuration only: no ids, versions, timestamps or credentials', async t => {
  const file = exportCollections(items, new Date('2025-05-06T07:08:09Z'))
  t.equal(file.format, 'gatehouse.collection')
  t.equal(file.format_version, 1)
  t.equal(file.exported_at, '2025-05-06T07:08:09.000Z')
  t.same(file.collections[0]!.collection, {
    name: 'Billing', description: 'Invoices', base_path: '/billing', upstream_url: 'https://billing.internal:8443/v1',
    status: 'disabled', headers: [{ name: 'x-team', value: 'payments' }, { name: 'x-api-key', env: 'BILLING_KEY' }], auth_required: false,
    cors: { allow_origins: ['https://app.example.com'], allow_methods: ['GET'], allow_headers: [], expose_headers: ['x-total'], allow_credentials: true, max_age_s: 60 }
  })
  const text = JSON.stringify(file)
  for (const leak of ['"id":"col_', '"id":"prx_', 'collection_id', 'workflow_id', 'created_at', 'updated_at', '"version"']) {
    t.notOk(text.includes(leak), `no ${leak}`)
  }
  t.ok(text.includes('"env":"BILLING_KEY"'), 'env references stay references')
  const p = file.collections[0]!.proxies[0]!
  t.same(p.workflow, workflow, 'the workflow definition is exported whole')
  t.equal(p.workflow_enabled, true)
  t.equal(p.status, 'published')
  t.equal(p.timeout_ms, 15000)
  t.equal(p.target_path, '/api/invoices/{id}')
  t.not(p.workflow, workflow, 'copied, not shared')
  t.same(file.collections[1]!.proxies, [])
})

t.test('round trip: exportCollections → JSON → parseImportFile gives the same records', async t => {
  const file = exportCollections(items)
  const result = parseImportFile(Buffer.from(JSON.stringify(file, null, 2)))
  t.ok(result.ok)
  if (result.ok) t.same(result.file, file)
})

t.test('hand-written files get defaults for optional fields', async t => {
  const result = parseImportFile('\uFEFF' + JSON.stringify({
    format: 'gatehouse.collection',
    format_version: 1,
    collections: [{
      collection: { name: 'Mini', base_path: '/mini', upstream_url: 'http://127.0.0.1:9000' },
      proxies: [{ name: 'ping', methods: ['GET'], path: '/ping', parameters: [{ name: 'q', location: 'query', type: 'string' }] }]
    }]
  }))
  t.ok(result.ok)
  if (!result.ok) return
  t.same(result.file.collections[0], {
    collection: { name: 'Mini', description: '', base_path: '/mini', upstream_url: 'http://127.0.0.1:9000', status: 'active', headers: [], auth_required: true, cors: null },
    proxies: [{
      name: 'ping', description: '', methods: ['GET'], path: '/ping', target_path: '/ping', headers: [],
      parameters: [{ name: 'q', location: 'query', type: 'string', required: false }],
      request_schema: null, response_schema: null, streaming: false, status: 'draft', workflow_enabled: false, workflow: null, timeout_ms: null, max_body_bytes: null
    }]
  })
})

function failure (t: Test, input: Buffer | string): { status: number, message: string, details: Array<{ field: string, message: string }> } {
  const result = parseImportFile(input)
  t.notOk(result.ok, 'refused')
  if (result.ok) return { status: 0, message: '', details: [] }
  t.same(result.error.details, result.details, 'the error carries the details')
  return { status: result.error.status, message: result.error.message, details: result.details as Array<{ field: string, message: string }> }
}

const valid = () => JSON.parse(JSON.stringify(exportCollections(items))) as Record<string, any>

t.test('strict validation names each bad field', async t => {
  t.match(failure(t, '{"format":'), { status: 400, details: [{ field: 'file', message: /is not valid JSON/ }] })
  t.match(failure(t, '[]'), { details: [{ field: 'file', message: 'must be a JSON object' }] })
  t.match(failure(t, JSON.stringify({ openapi: '3.0.3', info: {}, paths: {} })), { message: /OpenAPI document.*import\/openapi/ })
  t.match(failure(t, JSON.stringify({ format: 'other' })), { details: [{ field: 'format', message: "must be 'gatehouse.collection'" }] })
  t.match(failure(t, JSON.stringify({ ...valid(), format_version: 2 })), { message: /format_version 2.*newer release/ })

  const bad = valid()
  const c = bad.collections[0]
  c.collection.base_path = 'billing'
  c.collection.id = 'col_1'
  delete c.collection.upstream_url
  c.proxies[0].methods = ['GET', 'FETCH']
  c.proxies[0].parameters[0].location = 'header'
  c.proxies[0].workflow.nodes[0].settings = 'x'
  c.proxies[1].headers = [{ name: 'bad header', value: 'x' }]
  const { status, details } = failure(t, JSON.stringify(bad))
  t.equal(status, 400)
  t.same(new Set(details.map(d => d.field)), new Set([
    'collections[0].collection.base_path',
    'collections[0].collection.id',
    'collections[0].collection.upstream_url',
    'collections[0].proxies[0].methods[1]',
    'collections[0].proxies[0].parameters[0].location',
    'collections[0].proxies[0].workflow.nodes[0].settings',
    'collections[0].proxies[1].headers[0].name'
  ]))
  t.match(details.find(d => d.field === 'collections[0].collection.id'), { message: 'is not a known field' })
  t.match(details.find(d => d.field === 'collections[0].proxies[0].methods[1]'), { message: 'must be one of: "GET", "POST", "PUT", "DELETE", "PATCH"' })
})

t.test('checks beyond the schema: duplicates, header kinds, workflow wiring', async t => {
  const bad = valid()
  bad.collections[1].collection.base_path = '/billing'
  bad.collections[0].collection.headers.push({ name: 'x-both', value: 'a', env: 'B' })
  bad.collections[0].proxies[1].path = '/invoices/{invoiceId}'
  bad.collections[0].proxies[0].workflow.edges.push({ id: 'e3', source: 'n3', target: 'n9' })
  bad.collections[0].proxies[0].workflow.nodes.push({ id: 'n1', name: 'again', type: 'set_node' })
  const { details } = failure(t, JSON.stringify(bad))
  t.same(details, [
    { field: 'collections[0].collection.headers[2]', message: "needs exactly one of 'value' (a static value) or 'env' (an environment variable name)" },
    { field: 'collections[0].proxies[0].workflow.nodes[3].id', message: "'n1' is used by another node" },
    { field: 'collections[0].proxies[0].workflow.edges[2].target', message: "'n9' is not a node of this workflow" },
    { field: 'collections[0].proxies[1].path', message: 'GET /invoices/{invoiceId} is already used by collections[0].proxies[0]' },
    { field: 'collections[1].collection.base_path', message: "'/billing' is already used by collections[0]" }
  ])
})

t.test('size and count bounds', async t => {
  const big = parseImportFile(Buffer.alloc(2048, 0x20), { maxBytes: 1024 })
  t.notOk(big.ok)
  if (!big.ok) t.equal(big.error.status, 413)
  const many = valid()
  many.collections = Array.from({ length: 101 }, (_, i) => ({ collection: { ...many.collections[1].collection, base_path: `/c${i}` }, proxies: [] }))
  t.match(failure(t, JSON.stringify(many)), { details: [{ field: 'collections', message: 'must NOT have more than 100 items' }] })
  const none = valid()
  none.collections = []
  t.match(failure(t, JSON.stringify(none)), { details: [{ field: 'collections', message: 'must NOT have fewer than 1 items' }] })
})
