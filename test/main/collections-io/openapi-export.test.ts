import { readFileSync } from 'node:fs'
import t from 'tap'
import { fromOpenApi } from '../../../src/main/collections-io/openapi-import.js'
import { toOpenApi } from '../../../src/main/collections-io/openapi-export.js'
import { resolvePointer } from '../../../src/main/collections-io/schema-deref.js'
import { collectionRecord, proxyRecords } from './records.js'

const constAsEnum = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('{"const":"book"}', '{"enum":["book"]}'))
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/openapi/${name}`, import.meta.url), 'utf8')

/** Every `$ref` string found anywhere in a document. */
function refsOf (value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsOf(v, out)
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v)
      else refsOf(v, out)
    }
  }
  return out
}

const collection = collectionRecord({ name: 'Library', description: 'Books.', base_path: '/library' })
const proxies = proxyRecords([
  {
    name: 'List books',
    description: 'All books, paged.',
    path: '/books',
    status: 'published',
    parameters: [
      { name: 'limit', location: 'query', type: 'integer', required: false, default: 20, description: 'Page size' },
      { name: 'q', location: 'query', type: 'string', required: true }
    ],
    response_schema: { type: 'array', items: { $ref: '#/$defs/Book' }, $defs: { Book: { type: 'object', properties: { title: { type: ['string', 'null'] } } } } }
  },
  {
    name: 'book',
    methods: ['GET', 'PUT', 'DELETE'],
    path: '/books/{isbn}/copies/{copy}',
    status: 'published',
    parameters: [{ name: 'copy', location: 'path', type: 'integer', required: true, description: 'Copy number' }],
    request_schema: {
      type: 'object',
      required: ['kind'],
      properties: {
        kind: { const: 'book' },
        pages: { type: 'integer', exclusiveMinimum: 0, examples: [320] },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
        code: { type: ['string', 'integer'] }
      }
    }
  },
  { name: 'List books', path: '/archive', status: 'published' },
  { name: 'files', path: '/files/*', status: 'published' },
  { name: 'feed', path: '/feed', status: 'published', streaming: true },
  { name: 'draft one', path: '/draft', status: 'draft' }
])

t.test('a 3.1 document describes the published proxies as the gateway serves them', async t => {
  const doc = toOpenApi(collection, proxies, { version: '3.1', serverUrl: 'https://api.example.com/' }) as Record<string, any>
  t.equal(doc.openapi, '3.1.0')
  t.same(doc.info, { title: 'Library', version: '3', description: 'Books.' })
  t.same(doc.servers, [{ url: 'https://api.example.com/library', description: 'Gatehouse gateway' }])
  t.same(Object.keys(doc.paths), ['/books', '/books/{isbn}/copies/{copy}', '/archive', '/files/{wildcard}', '/feed'], 'drafts left out')

  const list = doc.paths['/books'].get
  t.equal(list.operationId, 'listBooks')
  t.equal(list.summary, 'List books')
  t.equal(list.description, 'All books, paged.')
  t.same(list.parameters, [
    { name: 'limit', in: 'query', required: false, description: 'Page size', schema: { type: 'integer', default: 20 } },
    { name: 'q', in: 'query', required: true, schema: { type: 'string' } }
  ])
  t.same(list.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Book' } },
    'root $defs move to components')
  t.same(doc.components.schemas.Book, { type: 'object', properties: { title: { type: ['string', 'null'] } } }, '3.1 keeps type lists')
  t.same(Object.keys(list.responses), ['200', '400', '401', '403', '404', '429', '502', '504'])
  t.same(list.responses['429'], { $ref: '#/components/responses/TooManyRequests' })
  t.equal(list.requestBody, undefined)

  const item = doc.paths['/books/{isbn}/copies/{copy}']
  t.same(Object.keys(item), ['get', 'put', 'delete'])
  t.same([item.get.operationId, item.put.operationId, item.delete.operationId], ['bookGet', 'bookPut', 'bookDelete'])
  t.same(item.get.parameters, [
    { name: 'isbn', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'copy', in: 'path', required: true, description: 'Copy number', schema: { type: 'integer' } }
  ], 'path parameters implied by the path are added')
  t.same(item.put.requestBody.content['application/json'].schema, proxies[1]!.request_schema)
  t.equal(item.put.requestBody.required, true)
  t.equal(item.get.requestBody, undefined, 'no body for GET')
  t.equal(item.delete.requestBody, undefined, 'no body for DELETE')
  t.same(item.get.responses['200'], { description: 'The response of the backend.' })

  t.equal(doc.paths['/archive'].get.operationId, 'listBooks_2', 'operation ids stay unique')
  const files = doc.paths['/files/{wildcard}'].get
  t.same(files.parameters[0].name, 'wildcard')
  t.match(files.parameters[0].description, /trailing '\/\*' wildcard/)
  t.same(doc.paths['/feed'].get.responses['200'].content, { 'text/event-stream': { schema: { type: 'string' } } })

  t.same(doc.security, [{ gateway_bearer: [], gateway_client_id: [], gateway_profile_id: [] }])
  t.same(doc.components.securitySchemes.gateway_client_id, { type: 'apiKey', in: 'header', name: 'X-Client-ID', description: 'The API client id.' })
  t.same(doc.components.securitySchemes.gateway_bearer.scheme, 'bearer')
  t.same(doc.components.schemas.GatewayError.properties.error.required, ['code', 'message'])
  for (const ref of refsOf(doc)) t.not(resolvePointer(doc, ref), undefined, `${ref} resolves`)
})

t.test('a 3.0 document converts 2020-12 constructs', async t => {
  const doc = toOpenApi(collection, proxies, { version: '3.0' }) as Record<string, any>
  t.equal(doc.openapi, '3.0.3')
  t.same(doc.servers, [{ url: '/library', description: 'Gatehouse gateway' }], 'relative server URL without a gateway URL')
  t.same(doc.paths['/books/{isbn}/copies/{copy}'].put.requestBody.content['application/json'].schema, {
    type: 'object',
    required: ['kind'],
    properties: {
      kind: { enum: ['book'] },
      pages: { type: 'integer', minimum: 0, exclusiveMinimum: true, example: 320 },
      tags: { type: 'array', nullable: true, items: { type: 'string' } },
      code: { anyOf: [{ type: 'string' }, { type: 'integer' }] }
    }
  })
  t.same(doc.components.schemas.Book, { type: 'object', properties: { title: { type: 'string', nullable: true } } })
  for (const ref of refsOf(doc)) t.not(resolvePointer(doc, ref), undefined, `${ref} resolves`)
})

t.test('drafts on request; no auth answers or schemes when the collection needs no auth', async t => {
  const open = collectionRecord({ auth_required: false })
  const doc = toOpenApi(open, proxies, { version: '3.1', includeDrafts: true }) as Record<string, any>
  t.ok(doc.paths['/draft'])
  t.equal(doc.security, undefined)
  t.equal(doc.components.securitySchemes, undefined)
  t.same(Object.keys(doc.paths['/draft'].get.responses), ['200', '400', '404', '502', '504'])
  t.same(Object.keys(doc.components.responses), ['BadRequest', 'NotFound', 'BadGateway', 'GatewayTimeout'])
})

t.test('definitions of the same name but different content get distinct components', async t => {
  const two = proxyRecords([
    { name: 'a', path: '/a', status: 'published', response_schema: { $ref: '#/$defs/Item', $defs: { Item: { type: 'string' } } } },
    { name: 'b', path: '/b', status: 'published', response_schema: { $ref: '#/$defs/Item', $defs: { Item: { type: 'integer' } } } },
    { name: 'c', path: '/c', status: 'published', response_schema: { $ref: '#/$defs/Item', $defs: { Item: { type: 'string' } } } }
  ])
  const doc = toOpenApi(collection, two, { version: '3.0' }) as Record<string, any>
  const schemaOf = (p: string) => doc.paths[p].get.responses['200'].content['application/json'].schema
  t.same([schemaOf('/a'), schemaOf('/b'), schemaOf('/c')], [
    { $ref: '#/components/schemas/Item' }, { $ref: '#/components/schemas/b_response_Item' }, { $ref: '#/components/schemas/Item' }
  ])
  t.same(doc.components.schemas.b_response_Item, { type: 'integer' })
})

for (const version of ['3.0', '3.1'] as const) {
  t.test(`round trip through OpenAPI ${version}: Petstore import → export → import keeps the proxies`, async t => {
    const first = fromOpenApi(fixture('petstore-3.0.json'), { upstream_url: 'http://127.0.0.1:9000' })
    const doc = toOpenApi(collectionRecord(first.collection), proxyRecords(first.proxies, { status: 'published' }), { version })
    const again = fromOpenApi(doc, { upstream_url: 'http://127.0.0.1:9000' })
    t.equal(again.collection.base_path, '/v3')
    t.same(again.proxies, first.proxies, 'names, methods, paths, parameters and schemas survive')
    t.same(again.warnings, [])
  })

  t.test(`round trip through OpenAPI ${version}: recursive schemas, wildcards and streaming`, async t => {
    const first = fromOpenApi(fixture('library-3.1.json'))
    const records = proxyRecords([...first.proxies, { name: 'files', path: '/files/*', target_path: '/files/*' }], { status: 'published' })
    const doc = toOpenApi(collectionRecord(first.collection), records, { version }) as Record<string, any>
    t.same(doc.paths['/categories/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Category' })
    t.same(doc.components.schemas.Category.properties.children.items, { $ref: '#/components/schemas/Category' })
    const again = fromOpenApi(doc, { upstream_url: 'http://127.0.0.1:9000' })
    const expected = [...first.proxies, { ...again.proxies.at(-1), path: '/files/*', target_path: '/files/*', parameters: [] }]
    // a name that is not an identifier comes back as its operation id, the old name as summary
    expected[3] = { ...expected[3], name: 'deleteBooksIsbn', description: 'DELETE /books/{isbn}' }
    if (version === '3.0') {
      // 3.0 has no `const`: it comes back as a one-value enum, which means the same
      for (const p of expected) {
        p.request_schema = constAsEnum(p.request_schema)
        p.response_schema = constAsEnum(p.response_schema)
      }
    }
    t.same(again.proxies, expected)
    t.equal(again.proxies.at(-1)!.path, '/files/*', 'the wildcard comes back as /*')
  })
}
