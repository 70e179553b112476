/**
 * GET /api/v1/openapi.json: the management API described by its own routes, roles and body
 * schemas, with operationIds that are the MCP tool names.
 */
import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { fromOpenApi } from '../../../src/main/collections-io/openapi-import.js'
import { OPERATIONS } from '../../../src/main/management/operation-catalogue.js'

t.test('the management OpenAPI document', async t => {
  const m = await startManagement(t)
  t.equal((await m.call('GET', '/api/v1/openapi.json', { role: null })).status, 401, 'needs a token like every management route')
  const r = await m.call('GET', '/api/v1/openapi.json', { role: 'viewer' })
  t.equal(r.status, 200)
  const doc = r.body
  t.equal(doc.openapi, '3.1.0')
  t.match(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' })

  const create = doc.paths['/api/v1/collections'].post
  t.equal(create.operationId, 'create_collection')
  t.equal(create['x-required-role'], 'editor')
  const createBody = create.requestBody.content['application/json'].schema
  t.match(createBody, { required: ['name', 'base_path'], properties: { base_path: { type: 'string' }, upstream_url: { type: 'string' }, upstream: { type: 'object' } } })
  t.notOk(createBody.required.includes('upstream_url'), 'a backend is upstream_url or upstream.targets, so neither is required alone')
  t.ok(create.responses['201'] !== undefined && create.responses['403'] !== undefined)
  const rotate = doc.paths['/api/v1/clients/{clientId}/profiles/{id}/rotate'].post
  t.same(rotate.parameters.map((p: any) => [p.name, p.in]), [['clientId', 'path'], ['id', 'path']])
  t.equal(rotate['x-required-role'], 'admin')
  t.match(doc.paths['/api/v1/audit-logs'].get.parameters.map((p: any) => p.name), ['limit', 'cursor', 'actor_sub', 'resource_kind'], 'query parameters')
  t.ok(doc.paths['/api/v1/mcp'] === undefined, 'the MCP endpoint is not a REST operation')

  const ids = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId))
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  // The routes this listener serves (the run and observability routes live with the full service).
  const served = Object.values(OPERATIONS).map(o => o.name).filter(n => ids.includes(n))
  t.ok(served.length >= 50, `catalogued operations are described (${served.length})`)

  // A consumer can read it: the gateway's own OpenAPI importer turns it into proxies.
  const imported = fromOpenApi(doc, { upstream_url: 'http://127.0.0.1:8081', base_path: '/mgmt' })
  t.ok(imported.proxies.length >= 50, `importable (${imported.proxies.length} operations)`)
})
