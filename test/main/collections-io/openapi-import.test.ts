import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { AppError } from '../../../src/common/errors.js'
import { stringify as toYaml } from 'yaml'
import { fromOpenApi } from '../../../src/main/collections-io/openapi-import.js'
import { OPENAPI_LIMITS } from '../../../src/main/collections-io/openapi-document.js'
import { openApiImportRequest } from '../../../src/main/collections-io/openapi-import-request.js'

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/openapi/${name}`, import.meta.url), 'utf8')
const petstoreText = fixture('petstore-3.0.json')
const petstore = () => JSON.parse(petstoreText) as Record<string, any>
const library = () => JSON.parse(fixture('library-3.1.json')) as Record<string, any>

function rejects (t: Test, fn: () => unknown, status: number, code: string, field?: string): AppError {
  try {
    fn()
  } catch (err) {
    t.ok(err instanceof AppError, 'throws an AppError')
    const e = err as AppError
    t.equal(e.status, status)
    t.equal(e.code, code)
    if (field !== undefined) t.ok((e.details as Array<{ field: string }>).some(d => d.field === field), `details name ${field}`)
    return e
  }
  t.fail('expected an error')
  return new AppError(0, '', '')
}

t.test('the Petstore 3.0 document becomes one draft proxy per operation', async t => {
  const { collection, proxies, warnings } = fromOpenApi(petstoreText, { upstream_url: 'https://petstore3.swagger.io/api/v3' })
  t.equal(collection.name, 'Swagger Petstore - OpenAPI 3.0')
  t.equal(collection.base_path, '/v3', 'base path from the relative server URL')
  t.equal(collection.upstream_url, 'https://petstore3.swagger.io/api/v3')
  t.match(collection.description, /sample Pet Store Server/)
  t.equal(proxies.length, 19)
  t.ok(proxies.every(p => p.status === 'draft' && p.workflow === null && p.workflow_enabled === false))
  t.same(proxies.map(p => `${p.methods?.join()} ${p.path}`).slice(0, 5),
    ['POST /pet', 'PUT /pet', 'GET /pet/findByStatus', 'GET /pet/findByTags', 'GET /pet/{petId}'])

  const byName = new Map(proxies.map(p => [p.name, p]))
  const getPet = byName.get('getPetById')!
  t.equal(getPet.path, '/pet/{petId}')
  t.equal(getPet.target_path, '/pet/{petId}')
  t.equal(getPet.description, 'Find pet by ID\n\nReturns a single pet')
  t.same(getPet.parameters, [{ name: 'petId', location: 'path', type: 'integer', required: true, description: 'ID of pet to return' }])
  t.equal(getPet.request_schema, null)
  t.same(getPet.response_schema?.required, ['name', 'photoUrls'])
  t.same((getPet.response_schema?.properties as any).category.properties.name, { type: 'string', examples: ['Dogs'] }, '$ref inlined, example → examples')
  t.notOk('xml' in (getPet.response_schema as object), 'OpenAPI-only xml annotation dropped')
  t.notOk('x-swagger-router-model' in (getPet.response_schema as object), 'extensions dropped')

  const byStatus = byName.get('findPetsByStatus')!
  t.same(byStatus.parameters, [{
    name: 'status', location: 'query', type: 'string', required: false, default: 'available',
    description: 'Status values that need to be considered for filter'
  }])
  t.same(byStatus.response_schema?.type, 'array')

  const addPet = byName.get('addPet')!
  t.equal(addPet.description, 'Add a new pet to the store', 'equal summary and description are not repeated')
  t.same(addPet.request_schema, addPet.response_schema, 'JSON request body chosen over XML and form')
  t.same(byName.get('createUsersWithListInput')!.request_schema?.type, 'array')
  t.equal(byName.get('createUser')!.response_schema, null, "a 'default' response is not a 2xx answer")
  t.same(byName.get('getInventory')!.response_schema, { type: 'object', additionalProperties: { type: 'integer', format: 'int32' } })

  t.same(warnings, [
    "GET /pet/findByTags: the parameter 'tags' has type array; it was imported as a string (the gateway validates scalar parameters).",
    "DELETE /pet/{petId}: the header parameter 'api_key' is not imported; the gateway's parameters are path and query only.",
    'POST /pet/{petId}/uploadImage: the request body has no JSON media type (application/octet-stream); no request schema was set.'
  ])

  // every imported schema compiles under a strict JSON Schema 2020-12 validator
  const ajv = new Ajv2020({ strict: true, strictTypes: false, validateFormats: false })
  for (const p of proxies) {
    for (const s of [p.request_schema, p.response_schema]) if (s !== null && s !== undefined) t.doesNotThrow(() => ajv.compile(s), `${p.name} schema compiles`)
  }
  const validate = ajv.compile(addPet.request_schema as object)
  t.ok(validate({ name: 'doggie', photoUrls: [] }))
  t.notOk(validate({ name: 'doggie' }), 'required photoUrls kept')
})

t.test('the same document as a parsed object or a Buffer gives the same result', async t => {
  const opts = { upstream_url: 'http://127.0.0.1:9000' }
  const fromText = fromOpenApi(petstoreText, opts)
  t.same(fromOpenApi(petstore(), opts), fromText)
  t.same(fromOpenApi(Buffer.from(petstoreText), opts), fromText)
})

t.test('options override the name, base path and backend', async t => {
  const { collection } = fromOpenApi(petstore(), { name: 'Pets', base_path: '/pets-api/', upstream_url: 'http://127.0.0.1:9000/' })
  t.same(collection, {
    name: 'Pets', description: collection.description, base_path: '/pets-api', upstream_url: 'http://127.0.0.1:9000',
    status: 'active', headers: [], auth_required: true
  })
  const err = rejects(t, () => fromOpenApi(petstore(), { base_path: 'pets', upstream_url: 'ftp://x' }), 400, 'validation_failed', 'base_path')
  t.ok((err.details as Array<{ field: string }>).some(d => d.field === 'upstream_url'), 'every bad option is listed')
})

t.test('without an absolute server URL or upstream_url the import says what to send', async t => {
  const e = rejects(t, () => fromOpenApi(petstore()), 400, 'validation_failed', 'upstream_url')
  t.match(e.message, /server URL '\/v3' is relative/)
  const doc = petstore()
  delete doc.servers
  const { collection } = fromOpenApi(doc, { upstream_url: 'http://127.0.0.1:9000' })
  t.equal(collection.base_path, '/swagger-petstore-openapi-3-0', 'base path slugified from the title')
})

t.test('an OpenAPI 3.1 document: refs, path-level parameters, type lists and recursion', async t => {
  const { collection, proxies, warnings } = fromOpenApi(library())
  t.equal(collection.upstream_url, 'https://eu.library.example/api/v2', 'server variables take their defaults')
  t.equal(collection.base_path, '/api/v2')
  t.equal(collection.description, 'Books, loans and a live feed of returns.')
  t.same(proxies.map(p => `${p.methods?.join()} ${p.path} ${p.name}`), [
    'GET /books listBooks', 'POST /books createBook', 'GET /books/{isbn} getBook',
    'DELETE /books/{isbn} DELETE /books/{isbn}', 'GET /categories/{id} getCategory', 'GET /returns/feed returnsFeed'
  ])
  type Imported = Record<string, any>
  // The six proxies just listed, in that order.
  const [list, create, get, del, category, feed] = proxies as [Imported, Imported, Imported, Imported, Imported, Imported]
  t.same(list.parameters, [
    { name: 'limit', location: 'query', type: 'integer', required: false, default: 20, description: 'Page size' },
    { name: 'author', location: 'query', type: 'string', required: false, description: 'Filter by author' }
  ])
  t.equal(create.description, 'Add a book\n\nAdds a book to the catalogue.')
  t.same(create.request_schema.properties.subtitle, { type: ['string', 'null'] })
  t.same(create.request_schema.properties.kind, { const: 'book' })
  t.same(create.request_schema.properties.pages, { type: 'integer', exclusiveMinimum: 0, examples: [320] })
  t.same(create.response_schema.allOf[0].required, ['isbn', 'title'], "201 with 'application/json; charset=utf-8'")
  t.same(get.parameters, [{ name: 'isbn', location: 'path', type: 'string', required: true, description: 'ISBN-13' }],
    'path-level parameters apply to each operation')
  t.ok(get.response_schema.allOf, "a '2XX' response is a success answer")
  t.same(del.parameters.map((p: any) => p.name), ['isbn'])
  t.equal(del.response_schema, null)
  t.same(category.response_schema.$ref, '#/$defs/Category', 'a recursive schema becomes a $defs reference')
  t.same(category.response_schema.$defs.Category.properties.children.items, { $ref: '#/$defs/Category' })
  t.same(create.response_schema.allOf[1].properties.category, { $ref: '#/$defs/Category' })
  t.same(create.response_schema.$defs.Category.required, ['name'])
  t.same(category.parameters, [{ name: 'id', location: 'path', type: 'integer', required: true }])
  t.equal(feed.streaming, true, 'a text/event-stream answer marks the proxy as streaming')
  t.equal(feed.response_schema, null)
  t.same(warnings, [
    "servers: 2 servers are listed; 'https://eu.library.example/api/v2' is used as the backend.",
    'HEAD /books: the method is not supported by the gateway; it was skipped.',
    "GET /books: the header parameter 'X-Trace' is not imported; the gateway's parameters are path and query only.",
    "GET /categories/{id}: the cookie parameter 'session' is not imported; the gateway's parameters are path and query only."
  ])

  const ajv = new Ajv2020({ strict: true, strictTypes: false, validateFormats: false })
  const validate = ajv.compile(category.response_schema)
  t.ok(validate({ name: 'a', children: [{ name: 'b', children: [] }] }))
  t.notOk(validate({ name: 'a', children: [{ children: [] }] }), 'the recursive part still validates')
})

t.test("OAI's 3.1 webhook example: webhooks are reported, not imported", async t => {
  const { proxies, warnings } = fromOpenApi(fixture('webhook-example-3.1.json'), { upstream_url: 'http://127.0.0.1:9000' })
  t.equal(proxies.length, 1)
  t.same(proxies[0]!.parameters, [{ name: 'limit', location: 'query', type: 'integer', required: false, description: 'How many items to return at one time (max 100)' }])
  t.same((proxies[0]!.response_schema as any).items.required, ['id', 'name'])
  t.same(warnings, ['webhooks: 1 webhook(s) describe calls the API makes, not routes; they were not imported.'])
})

t.test('OpenAPI 3.0 nullable and boolean exclusive bounds become JSON Schema 2020-12', async t => {
  const doc = {
    openapi: '3.0.3',
    info: { title: 'n', version: '1' },
    servers: [{ url: 'http://127.0.0.1:9000' }],
    paths: {
      '/a': {
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    note: { type: 'string', nullable: true },
                    mood: { type: 'string', enum: ['ok', 'bad'], nullable: true },
                    score: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: false }
                  }
                }
              }
            }
          },
          responses: { 204: { description: 'none' } }
        }
      }
    }
  }
  const { proxies } = fromOpenApi(doc)
  t.same((proxies[0]!.request_schema as any).properties, {
    note: { type: ['string', 'null'] },
    mood: { type: ['string', 'null'], enum: ['ok', 'bad', null] },
    score: { type: 'number', exclusiveMinimum: 0, maximum: 10 }
  })
})

t.test('basic validation answers clear field errors', async t => {
  rejects(t, () => fromOpenApi({ swagger: '1.2', info: { title: 'x' }, paths: {} }), 400, 'validation_failed', 'swagger')
  const e = rejects(t, () => fromOpenApi({}), 400, 'validation_failed')
  t.same((e.details as Array<{ field: string }>).map(d => d.field), ['openapi', 'info', 'paths'])
  rejects(t, () => fromOpenApi({ openapi: '4.0.0', info: { title: 'x' }, paths: {} }), 400, 'validation_failed', 'openapi')
  rejects(t, () => fromOpenApi({ openapi: '3.0.0', info: {}, paths: {} }), 400, 'validation_failed', 'info.title')
  rejects(t, () => fromOpenApi([]), 400, 'validation_failed', '')
  rejects(t, () => fromOpenApi('{"openapi": '), 400, 'invalid_json')
  const yaml = rejects(t, () => fromOpenApi('openapi: 3.0.0\ninfo:\n  title: x\n  bad: [unclosed\n'), 400, 'bad_request')
  t.match(yaml.message, /not valid YAML or JSON \(line \d+, column \d+\)/, 'a YAML mistake says where')
  rejects(t, () => fromOpenApi(' '.repeat(OPENAPI_LIMITS.maxBytes) + '{}'), 413, 'payload_too_large')
  const small = rejects(t, () => fromOpenApi(petstoreText, { maxBytes: 1024 }), 413, 'payload_too_large')
  t.match(small.message, /larger than 1 KiB \(OPENAPI_IMPORT_MAX_BYTES\)/, 'the limit is a setting, named in the answer')
})

t.test('the number of operations and the expansion of references are bounded', async t => {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i <= 100; i++) paths[`/r${i}`] = { get: { responses: {} } }
  const e = rejects(t, () => fromOpenApi({ openapi: '3.0.3', info: { title: 'big' }, paths }, { upstream_url: 'http://h', maxOperations: 100 }),
    400, 'validation_failed', 'paths')
  t.match(e.message, /101 operations; at most 100 can be imported at once \(OPENAPI_IMPORT_MAX_OPERATIONS\)/)
  t.equal(fromOpenApi({ openapi: '3.0.3', info: { title: 'big' }, paths }, { upstream_url: 'http://h' }).proxies.length, 101, 'under the default limit')

  // each level refers to the next one twice: 2^30 nodes if expanded naively
  const schemas: Record<string, unknown> = { L30: { type: 'string' } }
  for (let i = 0; i < 30; i++) schemas[`L${i}`] = { type: 'object', properties: { a: { $ref: `#/components/schemas/L${i + 1}` }, b: { $ref: `#/components/schemas/L${i + 1}` } } }
  const bomb = {
    openapi: '3.0.3', info: { title: 'bomb' }, paths: { '/x': { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/L0' } } } } } } } },
    components: { schemas }
  }
  rejects(t, () => fromOpenApi(bomb, { upstream_url: 'http://h' }), 400, 'validation_failed', 'components')
})

t.test('unresolvable and external references are left open with a warning', async t => {
  const doc = {
    openapi: '3.1.0', info: { title: 'refs' }, servers: [{ url: 'http://127.0.0.1:9000' }],
    paths: {
      '/x': {
        post: {
          parameters: [{ $ref: '#/components/parameters/Missing' }],
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { a: { $ref: 'other.json#/A' }, b: { $ref: '#/components/schemas/Nope' } } } } } },
          responses: {}
        }
      }
    }
  }
  const { proxies, warnings } = fromOpenApi(doc)
  t.same(proxies[0]!.request_schema, { type: 'object', properties: { a: {}, b: {} } })
  t.same(proxies[0]!.parameters, [])
  t.same(warnings, [
    'POST /x parameters[0]: the reference #/components/parameters/Missing does not resolve; it was skipped.',
    'POST /x requestBody: the external reference other.json#/A is not followed; that part accepts any value.',
    'POST /x requestBody: the reference #/components/schemas/Nope does not resolve; that part accepts any value.'
  ])
})

t.test('an import request is the document itself or a wrapper with options', async t => {
  const doc = petstore()
  t.same(openApiImportRequest(doc, { upstream_url: 'http://127.0.0.1:9000' }), { document: doc, options: { upstream_url: 'http://127.0.0.1:9000' } })
  const wrapped = openApiImportRequest({ document: petstoreText, name: ' Pets ', base_path: '/pets' }, { upstream_url: 'ignored' })
  t.same(wrapped, { document: petstoreText, options: { name: 'Pets', base_path: '/pets' } })
  t.equal(fromOpenApi(wrapped.document, { ...wrapped.options, upstream_url: 'http://h' }).collection.name, 'Pets')
  const e = rejects(t, () => openApiImportRequest({ document: doc, name: 3, upstreamUrl: 'x' }), 400, 'validation_failed')
  t.same(e.details, [{ field: 'name', message: 'must be a non-empty string' }, { field: 'upstreamUrl', message: 'is not a known field' }])
})

t.test('reference loops and __proto__ keys do no harm', async t => {
  const text = `{"openapi": "3.0.3", "info": {"title": "x"}, "servers": [{"url": "http://127.0.0.1:9000"}],
    "paths": {"/x": {"get": {
      "parameters": [{"$ref": "#/components/parameters/A"}],
      "responses": {"200": {"description": "ok", "content": {"application/json": {"schema":
        {"type": "object", "properties": {"__proto__": {"type": "string"}, "a": {"type": "string"}}, "__proto__": {"polluted": true}}}}}}}}},
    "components": {"parameters": {"A": {"$ref": "#/components/parameters/B"}, "B": {"$ref": "#/components/parameters/A"}}}}`
  const { proxies, warnings } = fromOpenApi(text)
  t.same(proxies[0]!.parameters, [])
  t.same(warnings, ['GET /x parameters[0]: the reference #/components/parameters/A loops; it was skipped.'])
  const schema = proxies[0]!.response_schema as Record<string, any>
  t.same(Object.keys(schema.properties), ['a'])
  t.equal(Object.getPrototypeOf(schema), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('YAML documents import like their JSON form; a billion-laughs document is refused', async t => {
  const fromJson = fromOpenApi(petstoreText, { upstream_url: 'https://petstore3.swagger.io/api/v3' })
  const fromYaml = fromOpenApi(toYaml(petstore()), { upstream_url: 'https://petstore3.swagger.io/api/v3' })
  t.same(fromYaml, fromJson, 'the same collection, proxies and warnings')
  t.equal(fromYaml.proxies.length, 19)
  const laughs = ['openapi: 3.0.0', 'info: {title: lol, version: "1"}', 'paths: {}', 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]']
  for (let i = 1; i < 10; i++) laughs.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`)
  const bomb = rejects(t, () => fromOpenApi(laughs.join('\n')), 400, 'bad_request')
  t.match(bomb.message, /alias/i, 'the answer says why')
})

t.test('Swagger 2.0 documents are upgraded to OpenAPI 3.1, with a warning', async t => {
  const swagger = {
    swagger: '2.0',
    info: { title: 'Pet shop', version: '1.0' },
    host: 'pets.example.com',
    basePath: '/v2',
    schemes: ['https'],
    consumes: ['application/json'],
    produces: ['application/json'],
    paths: {
      '/pets/{petId}': {
        get: { operationId: 'getPet', parameters: [{ name: 'petId', in: 'path', required: true, type: 'integer', format: 'int64' }], responses: { 200: { description: 'ok', schema: { $ref: '#/definitions/Pet' } } } },
        delete: { operationId: 'deletePet', parameters: [{ name: 'petId', in: 'path', required: true, type: 'integer' }], responses: { 204: { description: 'gone' } } }
      },
      '/pets': {
        post: { operationId: 'addPet', parameters: [{ in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }], responses: { 201: { description: 'created' } } },
        get: { operationId: 'findPets', parameters: [{ name: 'tags', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'multi' }, { name: 'limit', in: 'query', type: 'integer', maximum: 100 }], responses: { 200: { description: 'ok', schema: { type: 'array', items: { $ref: '#/definitions/Pet' } } } } }
      }
    },
    definitions: { Pet: { type: 'object', required: ['name'], properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, tag: { type: 'string' } } } }
  }
  for (const input of [swagger, JSON.stringify(swagger), toYaml(swagger)]) {
    const { collection, proxies, warnings } = fromOpenApi(input)
    t.equal(collection.upstream_url, 'https://pets.example.com/v2', 'host, basePath and schemes became the backend')
    t.same(proxies.map(p => `${p.methods![0]} ${p.path}`).sort(), ['DELETE /pets/{petId}', 'GET /pets', 'GET /pets/{petId}', 'POST /pets'])
    const add = proxies.find(p => p.name === 'addPet')!
    t.match(add.request_schema, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, 'the body parameter became the request schema')
    const find = proxies.find(p => p.name === 'findPets')!
    t.match(find.parameters, [{ name: 'tags', location: 'query' }, { name: 'limit', location: 'query' }])
    t.ok(warnings.some(w => /Swagger 2\.0; it was upgraded to OpenAPI 3\.1/.test(w)), 'a warning says it was upgraded')
  }
})
