import t from 'tap'
import { collection, proxy, rawRequest, startBackend, startGateway } from '../../helpers/gateway.js'

const call = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { connection: 'close', ...(init.headers as Record<string, string> ?? {}) } })
  const text = await res.text()
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text }
}

t.test('declared parameters and request_schema are enforced before the backend', async t => {
  const backend = await startBackend(t)
  const { gateway, url } = await startGateway(t, {}, { MAX_BODY_BYTES: '2000' })
  const c = collection({ base_path: '/shop', upstream_url: backend.url })
  gateway.setRoutes([c], [
    proxy(c, {
      methods: ['GET'], path: '/orders/{id}', target_path: '/orders/{id}', apply_parameter_defaults: true,
      parameters: [
        { name: 'id', location: 'path', type: 'integer', required: true },
        { name: 'limit', location: 'query', type: 'integer', required: false, default: 10 },
        { name: 'verbose', location: 'query', type: 'boolean', required: false },
        { name: 'region', location: 'query', type: 'string', required: true }
      ]
    }),
    proxy(c, {
      methods: ['POST'], path: '/orders', target_path: '/orders',
      request_schema: { type: 'object', required: ['item', 'qty'], additionalProperties: false, properties: { item: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } }
    })
  ])

  let r = await call(`${url}/shop/orders/12?region=eu`)
  t.equal(r.status, 200)
  t.equal(backend.seen.at(-1)!.url, '/orders/12?region=eu&limit=10', 'defaults are added before forwarding')
  r = await call(`${url}/shop/orders/12?region=eu&limit=3&verbose=true`)
  t.equal(backend.seen.at(-1)!.url, '/orders/12?region=eu&limit=3&verbose=true')

  const before = backend.seen.length
  r = await call(`${url}/shop/orders/abc?limit=x&verbose=maybe`)
  t.equal(r.status, 400)
  t.equal(r.body.error.code, 'validation_failed')
  t.same(r.body.error.details.map((d: any) => d.field).sort(), ['path.id', 'query.limit', 'query.region', 'query.verbose'])
  t.type(r.body.request_id, 'string')

  r = await call(`${url}/shop/orders`, { method: 'POST', body: JSON.stringify({ item: 'pen', qty: 2 }), headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 200)
  t.equal(backend.seen.at(-1)!.body, '{"item":"pen","qty":2}')
  const n = backend.seen.length
  r = await call(`${url}/shop/orders`, { method: 'POST', body: JSON.stringify({ item: 5, qty: 0, extra: true }), headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 400)
  t.same(r.body.error.details.map((d: any) => d.field).sort(), ['body.extra', 'body.item', 'body.qty'])
  r = await call(`${url}/shop/orders`, { method: 'POST', body: '{"item":', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 400)
  t.equal(r.body.error.code, 'invalid_json')
  t.match(r.body.error.message, /line 1, column 9/, 'the syntax error says where')
  r = await call(`${url}/shop/orders`, { method: 'POST', body: '{\n  "item": "pen",\n  "qty": 2,\n}', headers: { 'content-type': 'application/json' } })
  t.match(r.body.error, { code: 'invalid_json', details: [{ field: '(body)', line: 4, column: 1 }] })
  r = await call(`${url}/shop/orders`, { method: 'POST', body: 'item=pen', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(r.status, 415)
  r = await call(`${url}/shop/orders`, { method: 'POST', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 400, 'a required body is missing')
  r = await call(`${url}/shop/orders`, { method: 'POST', body: JSON.stringify({ item: 'x'.repeat(3000), qty: 1 }), headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 413)
  t.equal(backend.seen.length, n, 'no invalid request reached the backend')
  t.equal(n - before, 1)
})

t.test('parameter defaults are added only when the proxy asks for it (apply_parameter_defaults, off by default)', async t => {
  const backend = await startBackend(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/files', upstream_url: backend.url })
  const parameters = [
    { name: 'page', location: 'query' as const, type: 'integer' as const, required: false, default: 1 },
    { name: 'format', location: 'query' as const, type: 'string' as const, required: true, default: 'json' }
  ]
  gateway.setRoutes([c], [
    proxy(c, { methods: ['GET'], path: '/signed', target_path: '/signed', parameters }),
    proxy(c, { methods: ['GET'], path: '/filled', target_path: '/filled', parameters, apply_parameter_defaults: true })
  ])
  // A signed URL: the backend must see exactly the query the client signed.
  let r = await call(`${url}/files/signed?sig=abc123&expires=99`)
  t.equal(r.status, 200)
  t.equal(backend.seen.at(-1)!.url, '/signed?sig=abc123&expires=99', 'off (the default): the query is forwarded as sent')
  r = await call(`${url}/files/signed`)
  t.equal(r.status, 200, 'a required parameter with a default may be omitted: the backend assumes it')
  t.equal(backend.seen.at(-1)!.url, '/signed')
  r = await call(`${url}/files/signed?page=x`)
  t.equal(r.status, 400, 'types are still checked')
  r = await call(`${url}/files/filled?sig=abc123`)
  t.equal(backend.seen.at(-1)!.url, '/filled?sig=abc123&page=1&format=json', 'on: the defaults are added')
  r = await call(`${url}/files/filled?page=4&format=xml`)
  t.equal(backend.seen.at(-1)!.url, '/filled?page=4&format=xml', 'on: values the caller sent are kept')
})

t.test('a proxy body limit overrides MAX_BODY_BYTES, announced or chunked, and the rest is not read', async t => {
  const backend = await startBackend(t)
  const { gateway, url, port } = await startGateway(t, {}, { MAX_BODY_BYTES: '5000' })
  const c = collection({ base_path: '/up', upstream_url: backend.url })
  gateway.setRoutes([c], [
    proxy(c, { methods: ['POST'], path: '/small', target_path: '/small', max_body_bytes: 100 }),
    proxy(c, { methods: ['POST'], path: '/large', target_path: '/large', max_body_bytes: 20000 }),
    proxy(c, { methods: ['POST'], path: '/default', target_path: '/default' })
  ])
  let r = await call(`${url}/up/small`, { method: 'POST', body: 'x'.repeat(100) })
  t.equal(r.status, 200, 'exactly the limit passes')
  r = await call(`${url}/up/small`, { method: 'POST', body: 'x'.repeat(101) })
  t.equal(r.status, 413)
  t.match(r.body.error.message, /larger than 100 bytes/)
  r = await call(`${url}/up/large`, { method: 'POST', body: 'x'.repeat(12000) })
  t.equal(r.status, 200, 'a proxy may allow more than the global default')
  r = await call(`${url}/up/default`, { method: 'POST', body: 'x'.repeat(5001) })
  t.equal(r.status, 413, 'without its own limit a proxy uses MAX_BODY_BYTES')
  const n = backend.seen.length
  // Chunked: no length announced, the limit is applied while reading.
  const raw = await rawRequest(port, 'POST /up/small HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n' +
    `64\r\n${'y'.repeat(100)}\r\n64\r\n${'y'.repeat(100)}\r\n0\r\n\r\n`)
  t.match(raw, /^HTTP\/1\.1 413/)
  t.equal(backend.seen.length, n, 'nothing over a limit reached the backend')
})

t.test('a GET on a GET+POST proxy with a request schema is not refused for lacking a body', async t => {
  const backend = await startBackend(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/both', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, {
    methods: ['GET', 'POST', 'DELETE'], path: '/items', target_path: '/items',
    request_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }
  })])
  let r = await call(`${url}/both/items?page=2`)
  t.equal(r.status, 200, 'GET carries no body and needs none')
  t.equal(backend.seen.at(-1)!.url, '/items?page=2')
  r = await call(`${url}/both/items`, { method: 'DELETE' })
  t.equal(r.status, 200, 'DELETE without a body passes too')
  r = await call(`${url}/both/items`, { method: 'POST', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 400, 'POST defines a body: a missing one is refused')
  t.same(r.body.error.details, [{ field: 'body', message: 'is required' }])
  r = await call(`${url}/both/items`, { method: 'DELETE', body: '{"name":1}', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 400, 'a body that is sent is validated whatever the method')
  r = await call(`${url}/both/items`, { method: 'POST', body: '{"name":"a"}', headers: { 'content-type': 'application/json' } })
  t.equal(r.status, 200)
})
