/**
 * A proxy's apply_parameter_defaults through the management surfaces: off by default, set and read
 * back, described in the management OpenAPI document, kept by export and import; the developer
 * portal's test fields still read the defaults (test/console/portal.test.ts).
 */
import t from 'tap'
import { startManagement } from '../../helpers/management.js'

t.test('apply_parameter_defaults is a proxy field, off by default', async t => {
  const m = await startManagement(t)
  const c = (await m.call('POST', '/api/v1/collections', { body: { name: 'files', base_path: '/files', upstream_url: 'http://127.0.0.1:9' } })).body
  const parameters = [{ name: 'page', location: 'query', type: 'integer', default: 1 }]
  const plain = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'plain', methods: ['GET'], path: '/plain', parameters } })
  t.equal(plain.status, 201)
  t.equal(plain.body.apply_parameter_defaults, false, 'off unless asked for')
  t.same(plain.body.parameters[0].default, 1, 'the default itself is kept (portal, OpenAPI)')
  const filled = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'filled', methods: ['GET'], path: '/filled', parameters, apply_parameter_defaults: true } })
  t.equal(filled.body.apply_parameter_defaults, true)
  const off = await m.call('PUT', `/api/v1/proxies/${filled.body.id as string}`, { role: 'editor', body: { apply_parameter_defaults: false } })
  t.equal(off.body.apply_parameter_defaults, false)
  t.equal((await m.call('GET', `/api/v1/proxies/${filled.body.id as string}`)).body.apply_parameter_defaults, false)
  const bad = await m.call('PUT', `/api/v1/proxies/${filled.body.id as string}`, { body: { apply_parameter_defaults: 'yes' } })
  t.equal(bad.status, 400)
  await m.call('PUT', `/api/v1/proxies/${filled.body.id as string}`, { body: { apply_parameter_defaults: true } })

  const doc = (await m.call('GET', '/api/v1/openapi.json', { role: 'viewer' })).body
  for (const [path, method] of [['/api/v1/proxies', 'post'], ['/api/v1/proxies/{id}', 'put']] as const) {
    t.match(doc.paths[path][method].requestBody.content['application/json'].schema.properties.apply_parameter_defaults, { type: 'boolean' }, `${method} ${path} documents the field`)
  }

  const file = (await m.call('GET', `/api/v1/collections/${c.id as string}/export`)).body
  const exported = Object.fromEntries(file.collections[0].proxies.map((p: any) => [p.name, p]))
  t.equal(exported.filled.apply_parameter_defaults, true, 'exported when on')
  t.notOk('apply_parameter_defaults' in exported.plain, 'left out when off (files read as before)')
  file.collections[0].collection.base_path = '/files2'
  const imported = await m.call('POST', '/api/v1/collections/import', { body: file })
  t.equal(imported.status, 201, JSON.stringify(imported.body))
  const again = (await m.call('GET', '/api/v1/proxies?limit=500')).body.items.filter((p: any) => p.collection_id !== c.id)
  t.same(Object.fromEntries(again.map((p: any) => [p.name, p.apply_parameter_defaults])), { plain: false, filled: true }, 'import keeps it')
})
