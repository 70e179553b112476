import { readFileSync } from 'node:fs'
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement, type TestManagement } from '../../helpers/management.js'

const petstoreText = readFileSync(new URL('../../fixtures/openapi/petstore-3.0.json', import.meta.url), 'utf8')
const PETSTORE_UPSTREAM = 'https://petstore3.swagger.io/api/v3'

/** Uploads a collection file as multipart/form-data (part `file` unless told otherwise). */
async function upload (m: TestManagement, file: unknown, opts: { query?: string, part?: string, role?: 'viewer' | 'editor' } = {}) {
  const form = new FormData()
  form.append(opts.part ?? 'file', new Blob([typeof file === 'string' ? file : JSON.stringify(file)], { type: 'application/json' }), 'export.gatehouse.json')
  const res = await fetch(`${m.url}/api/v1/collections/import${opts.query ?? ''}`, {
    method: 'POST', body: form, headers: { connection: 'close', authorization: `Bearer ${await m.token(opts.role ?? 'editor')}` }
  })
  return { status: res.status, body: await res.json() as any }
}

const countCollections = async (m: TestManagement) => (await m.call('GET', '/api/v1/collections?limit=500')).body.items.length

async function seed (m: TestManagement) {
  let r = await m.call('POST', '/api/v1/collections', {
    body: { name: 'Billing – EU', base_path: '/billing', upstream_url: 'http://127.0.0.1:9000', headers: [{ name: 'x-api-key', env: 'BILLING_KEY' }, { name: 'x-team', value: 'payments' }] }
  })
  const c = r.body
  r = await m.call('POST', '/api/v1/proxies', {
    body: {
      collection_id: c.id, name: 'getInvoice', description: 'One invoice', methods: ['GET'], path: '/invoices/{id}', target_path: '/v2/invoices/{id}',
      parameters: [{ name: 'id', location: 'path', type: 'integer', required: true }, { name: 'expand', location: 'query', type: 'boolean', default: false }],
      response_schema: { type: 'object', properties: { id: { type: 'integer' } } }, status: 'published'
    }
  })
  const published = r.body
  r = await m.call('POST', '/api/v1/proxies', {
    body: { collection_id: c.id, name: 'createInvoice', methods: ['POST'], path: '/invoices', request_schema: { type: 'object', required: ['amount'] } }
  })
  const draft = r.body
  r = await m.call('PUT', `/api/v1/proxies/${draft.id}/workflow`, { body: { enabled: true } })
  return { c, published, draft }
}

for (const kind of STORE_KINDS) {
  t.test(`collection import and export (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const { c, draft } = await seed(m)
    let file: any

    t.test('export one collection as a file', async t => {
      const r = await m.call('GET', `/api/v1/collections/${c.id}/export`, { role: 'editor' })
      t.equal(r.status, 200)
      t.match(r.headers.get('content-disposition'), /^attachment; filename="Billing-EU\.gatehouse\.json"; filename\*=UTF-8''Billing%20%E2%80%93%20EU\.gatehouse\.json$/)
      file = r.body
      t.match(file, { format: 'gatehouse.collection', format_version: 1 })
      t.equal(file.collections.length, 1)
      const { collection, proxies } = file.collections[0]
      t.same(collection.headers, [{ name: 'x-api-key', env: 'BILLING_KEY' }, { name: 'x-team', value: 'payments' }])
      t.equal(collection.id, undefined, 'no ids in the file')
      t.same(proxies.map((p: any) => [p.name, p.status, p.workflow_enabled]), [['getInvoice', 'published', false], ['createInvoice', 'draft', true]])
      t.equal(proxies[1].workflow.nodes[0].type, 'http_trigger', 'workflows are exported')
      t.equal(proxies[0].target_path, '/v2/invoices/{id}')
      t.notOk(JSON.stringify(file).includes(c.id), 'no record id anywhere')

      t.equal((await m.call('GET', '/api/v1/collections/nope/export', { role: 'viewer' })).status, 404)
      t.equal((await m.call('GET', `/api/v1/collections/${c.id}/export`, { role: null })).status, 401)
      t.equal(m.events.filter(e => e.resource_kind === 'collection' && e.operation !== 'created').length, 0, 'exports emit nothing')
    })

    t.test('bulk export', async t => {
      const other = (await m.call('POST', '/api/v1/collections', { body: { name: 'other', base_path: '/other', upstream_url: 'http://127.0.0.1:9001' } })).body
      let r = await m.call('GET', `/api/v1/collections/export?ids=${other.id},${c.id}`, { role: 'editor' })
      t.equal(r.status, 200)
      t.same(r.body.collections.map((x: any) => x.collection.name), ['other', 'Billing – EU'], 'in the order asked')
      t.match(r.headers.get('content-disposition'), /filename="gatehouse-collections-\d{4}-\d\d-\d\d\.gatehouse\.json"/)
      r = await m.call('GET', '/api/v1/collections/export', { role: 'editor' })
      t.same(r.body.collections.map((x: any) => x.collection.base_path), ['/billing', '/other'], 'all without ids')
      r = await m.call('GET', `/api/v1/collections/export?ids=${c.id},missing`, { role: 'viewer' })
      t.equal(r.status, 404)
      t.match(r.body.error.message, /'missing'/)
      r = await m.call('GET', '/api/v1/collections/export?ids=,', { role: 'viewer' })
      t.equal(r.status, 400)
      t.equal(r.body.error.details[0].field, 'ids')
      await m.call('DELETE', `/api/v1/collections/${other.id}`)
    })

    t.test('OpenAPI download', async t => {
      let r = await m.call('GET', `/api/v1/collections/${c.id}/openapi?version=3.0`, { role: 'viewer' })
      t.equal(r.status, 200)
      t.equal(r.body.openapi, '3.0.3')
      t.same(Object.keys(r.body.paths), ['/invoices/{id}'], 'only published proxies by default')
      t.same(r.body.paths['/invoices/{id}'].get.parameters.map((p: any) => p.name), ['id', 'expand'])
      t.equal(r.body.servers[0].url, '/billing')
      r = await m.call('GET', `/api/v1/collections/${c.id}/openapi?include_drafts=true&server_url=https://api.example.com`, { role: 'editor' })
      t.equal(r.body.openapi, '3.1.0', '3.1 by default')
      t.same(Object.keys(r.body.paths).sort(), ['/invoices', '/invoices/{id}'])
      t.same(r.body.paths['/invoices'].post.requestBody.content['application/json'].schema, { type: 'object', required: ['amount'] })
      t.equal(r.body.servers[0].url, 'https://api.example.com/billing')
      r = await m.call('GET', `/api/v1/collections/${c.id}/openapi?version=2.0`, { role: 'viewer' })
      t.equal(r.status, 400)
      t.equal(r.body.error.details[0].field, 'version')
      r = await m.call('GET', `/api/v1/collections/${c.id}/openapi?include_drafts=yes`, { role: 'viewer' })
      t.equal(r.status, 400)
      r = await m.call('GET', `/api/v1/collections/${c.id}/openapi?server_url=ftp://x`, { role: 'viewer' })
      t.equal(r.status, 400)
      t.equal((await m.call('GET', '/api/v1/collections/nope/openapi', { role: 'viewer' })).status, 404)
    })

    t.test('import a file: conflicts create nothing, then drafts by default', async t => {
      const before = await countCollections(m)
      const changes = m.configChanges
      m.events.length = 0
      let r = await upload(m, file)
      t.equal(r.status, 409, 'the base path is taken')
      t.match(r.body.error.message, /base_path '\/billing' is already used by collection 'Billing – EU'/)
      t.equal(await countCollections(m), before)
      t.equal(m.events.length, 0, 'a failed import emits nothing')

      const two = structuredClone(file)
      two.collections[0].collection.base_path = '/billing-new'
      two.collections.push(structuredClone(file.collections[0]))
      r = await upload(m, two)
      t.equal(r.status, 409, 'one conflicting collection refuses the whole file')
      t.equal(await countCollections(m), before, 'nothing was created')

      r = await upload(m, file, { role: 'viewer' })
      t.equal(r.status, 403)

      const moved = structuredClone(file)
      moved.collections[0].collection.base_path = '/billing-copy'
      r = await upload(m, moved)
      t.equal(r.status, 201)
      t.equal(r.body.items.length, 1)
      const imported = r.body.items[0]
      t.match(imported, { name: 'Billing – EU', base_path: '/billing-copy', proxy_count: 2, version: 1 })
      t.not(imported.id, c.id)
      t.same(m.events, [{ resource_kind: 'collection', collection_id: imported.id, operation: 'imported', actor_sub: 'editor-user' }])
      t.ok(m.configChanges > changes, 'the route table is reloaded')
      const proxies = (await m.call('GET', `/api/v1/proxies?collection_id=${imported.id}`)).body.items
      t.same(proxies.map((p: any) => [p.name, p.status, p.workflow_enabled]), [['getInvoice', 'draft', false], ['createInvoice', 'draft', true]],
        'imported proxies arrive as drafts')
      t.same(proxies[0].parameters, file.collections[0].proxies[0].parameters)
      t.not(proxies[1].workflow_id, draft.workflow_id)
      t.same(proxies[1].workflow, (await m.call('GET', `/api/v1/proxies/${draft.id}`)).body.workflow)

      // round trip: the export of the import is the same file apart from the base path and time
      const again = (await m.call('GET', `/api/v1/collections/${imported.id}/export`)).body
      again.collections[0].collection.base_path = '/billing'
      const expected = structuredClone(file.collections)
      expected[0].proxies[0].status = 'draft'
      t.same(again.collections, expected)
    })

    t.test('import with keep_status, as JSON, several collections', async t => {
      const f = structuredClone(file)
      f.collections[0].collection.base_path = '/kept'
      f.collections.push({ collection: { name: 'tiny', base_path: '/tiny', upstream_url: 'http://127.0.0.1:9002' }, proxies: [] })
      m.events.length = 0
      const r = await m.call('POST', '/api/v1/collections/import?keep_status=true', { role: 'editor', body: f })
      t.equal(r.status, 201)
      t.same(r.body.items.map((x: any) => [x.base_path, x.proxy_count]), [['/kept', 2], ['/tiny', 0]])
      t.same(m.events.map(e => e.resource_kind === 'collection' && [e.operation, e.collection_id]), r.body.items.map((x: any) => ['imported', x.id]))
      const proxies = (await m.call('GET', `/api/v1/proxies?collection_id=${r.body.items[0].id}`)).body.items
      t.same(proxies.map((p: any) => p.status), ['published', 'draft'])
      t.equal((await m.call('POST', '/api/v1/collections/import?keep_status=maybe', { role: 'editor', body: f })).status, 400)
    })

    t.test('bad uploads', async t => {
      const before = await countCollections(m)
      const form = new FormData()
      form.append('note', 'a text field, no file')
      const res = await fetch(`${m.url}/api/v1/collections/import`, { method: 'POST', body: form, headers: { connection: 'close', authorization: `Bearer ${await m.token('editor')}` } })
      t.equal(res.status, 400, 'a form without a file')
      t.match((await res.json() as any).error.message, /no part named "file"/)
      let r = await upload(m, { ...file, collections: file.collections.map((c: any) => ({ ...c, collection: { ...c.collection, base_path: `${c.collection.base_path}-other` } })) }, { part: 'other' })
      t.equal(r.status, 201, 'the one file of a form is taken whatever its field is called')
      const back = await countCollections(m)
      for (const c of r.body.items) await m.call('DELETE', `/api/v1/collections/${c.id}`)
      t.equal(await countCollections(m), back - r.body.items.length)
      r = await upload(m, '{"format":')
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'validation_failed')
      t.match(r.body.error.details[0], { field: 'file' })
      r = await upload(m, JSON.parse(petstoreText))
      t.equal(r.status, 400)
      t.match(r.body.error.message, /OpenAPI document/)
      const bad = structuredClone(file)
      bad.collections[0].collection.base_path = '/bad-one'
      bad.collections[0].proxies[0].target_path = '/v2/{nope}'
      bad.collections[0].proxies[1].methods = ['FETCH']
      r = await upload(m, bad)
      t.equal(r.status, 400)
      t.ok(r.body.error.details.some((d: any) => d.field.startsWith('collections.0.proxies.1.methods') || d.field.startsWith('collections[0].proxies[1].methods')))
      bad.collections[0].proxies[1].methods = ['POST']
      r = await upload(m, bad)
      t.equal(r.status, 400)
      t.same(r.body.error.details, [{ field: 'collections[0].proxies[0].target_path', message: 'uses {nope} which the path does not define' }])
      bad.collections[0].proxies[0].target_path = '/v2/{id}'
      bad.collections[0].proxies[1].workflow = { nodes: [], edges: [] }
      r = await upload(m, bad)
      t.equal(r.status, 400, 'an enabled workflow must pass the save checks')
      t.equal(r.body.error.details[0].field, 'collections[0].proxies[1].workflow.nodes')

      r = await m.call('POST', '/api/v1/collections/import', { role: 'editor', body: 'x', headers: { 'content-type': 'text/plain' } })
      t.equal(r.status, 415)
      r = await m.call('POST', '/api/v1/collections/import', { role: 'editor', body: '', headers: { 'content-type': 'application/json' } })
      t.equal(r.status, 400)
      r = await m.call('POST', '/api/v1/collections/import', { role: 'editor', body: '--x\r\n', headers: { 'content-type': 'multipart/form-data' } })
      t.equal(r.status, 400, 'multipart without a boundary')
      r = await m.call('POST', '/api/v1/collections/import', { role: null, body: file })
      t.equal(r.status, 401)
      t.equal(await countCollections(m), before, 'nothing was created')
    })

    t.test('import the Petstore OpenAPI document', async t => {
      m.events.length = 0
      let r = await m.call('POST', `/api/v1/collections/import/openapi?upstream_url=${encodeURIComponent(PETSTORE_UPSTREAM)}`, { role: 'editor', body: petstoreText })
      t.equal(r.status, 201)
      const pets = r.body
      t.match(pets, { name: 'Swagger Petstore - OpenAPI 3.0', base_path: '/v3', upstream_url: PETSTORE_UPSTREAM, proxy_count: 19, version: 1 })
      t.equal(r.headers.get('etag'), '"1"')
      t.ok(Array.isArray(pets.warnings) && pets.warnings.length > 0, 'what cannot be carried over is listed')
      t.ok(pets.warnings.some((w: string) => /api_key/.test(w)), 'the header parameter is reported')
      t.same(m.events, [{ resource_kind: 'collection', collection_id: pets.id, operation: 'openapi_imported', actor_sub: 'editor-user' }])
      const proxies = (await m.call('GET', `/api/v1/proxies?collection_id=${pets.id}&limit=100`)).body.items
      t.equal(proxies.length, 19)
      t.ok(proxies.every((p: any) => p.status === 'draft'))
      const getPet = proxies.find((p: any) => p.name === 'getPetById')
      t.match(getPet, { methods: ['GET'], path: '/pet/{petId}', parameters: [{ name: 'petId', location: 'path', type: 'integer', required: true }] })
      t.match(getPet.response_schema, { type: 'object', required: ['name', 'photoUrls'] })
      t.match(proxies.find((p: any) => p.name === 'addPet').request_schema, { type: 'object', properties: { name: { type: 'string' } } })

      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { document: JSON.parse(petstoreText), upstream_url: PETSTORE_UPSTREAM } })
      t.equal(r.status, 409, 'same base path again')
      r = await m.call('POST', '/api/v1/collections/import/openapi', {
        role: 'editor', body: { document: petstoreText, upstream_url: PETSTORE_UPSTREAM, base_path: '/pets-2', name: 'Pets 2' }
      })
      t.equal(r.status, 201, 'the wrapper form, with the document as text')
      t.match(r.body, { name: 'Pets 2', base_path: '/pets-2', proxy_count: 19 })

      // round trip through OpenAPI: export with drafts, import the result
      const doc = (await m.call('GET', `/api/v1/collections/${pets.id}/openapi?include_drafts=true&version=3.0`)).body
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { document: doc, upstream_url: PETSTORE_UPSTREAM, base_path: '/pets-3' } })
      t.equal(r.status, 201)
      t.equal(r.body.proxy_count, 19)
      const back = (await m.call('GET', `/api/v1/proxies?collection_id=${r.body.id}&limit=100`)).body.items
      const shape = (list: any[]) => list.map(p => `${p.methods.join()} ${p.path} ${p.parameters.map((x: any) => `${x.name}:${x.type}`).join()}`).sort()
      t.same(shape(back), shape(proxies))
      t.same(back.find((p: any) => p.name === 'getPetById').response_schema.required, getPet.response_schema.required)
    })

    t.test('bad OpenAPI imports', async t => {
      const before = await countCollections(m)
      m.events.length = 0
      let r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: petstoreText })
      t.equal(r.status, 400, 'a relative server URL needs upstream_url')
      t.equal(r.body.error.details[0].field, 'upstream_url')
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: 'openapi: 3.0.0\ninfo:\n  title: x\n', headers: { 'content-type': 'application/yaml' } })
      t.equal(r.status, 400, 'YAML is read; this document lacks paths')
      t.match(r.body.error.details, [{ field: 'paths' }])
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: 'x', headers: { 'content-type': 'text/plain' } })
      t.equal(r.status, 400, 'plain text that is no document')
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: 'x', headers: { 'content-type': 'image/png' } })
      t.equal(r.status, 415)
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: '{"openapi":' })
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'invalid_json')
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { swagger: '1.2', info: { title: 'x' }, paths: {} } })
      t.equal(r.status, 400)
      t.match(r.body.error.message, /Swagger "1\.2" is not supported; Swagger 2\.0 and OpenAPI 3\.0 and 3\.1 are/)
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { document: JSON.parse(petstoreText), upstream_url: PETSTORE_UPSTREAM, colour: 'red' } })
      t.equal(r.status, 400)
      t.equal(r.body.error.details[0].field, 'colour')
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: { document: JSON.parse(petstoreText), upstream_url: PETSTORE_UPSTREAM, base_path: '/bad/../x' } })
      t.equal(r.status, 400, 'the base path follows the collection rules')
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'viewer', body: petstoreText })
      t.equal(r.status, 403)
      r = await m.call('POST', '/api/v1/collections/import/openapi', { role: null, body: petstoreText })
      t.equal(r.status, 401)
      t.equal(await countCollections(m), before)
      t.equal(m.events.length, 0)
    })

    t.test('operations the gateway cannot tell apart are skipped with a warning', async t => {
      const doc = {
        openapi: '3.1.0', info: { title: 'Clash' }, servers: [{ url: 'http://127.0.0.1:9003/api' }],
        paths: { '/a/{id}': { get: { operationId: 'byId' } }, '/a/{name}': { get: { operationId: 'byName' }, put: { operationId: 'putName' } } }
      }
      const r = await m.call('POST', '/api/v1/collections/import/openapi', { role: 'editor', body: doc })
      t.equal(r.status, 201)
      t.equal(r.body.base_path, '/api')
      t.equal(r.body.proxy_count, 2)
      t.ok(r.body.warnings.some((w: string) => /GET \/a\/\{name\}.*byId/.test(w)))
    })
  })
}
