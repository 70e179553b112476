import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'

/** The whole service on port 0 (workflows run in its worker pool), and an editor's management API client. */
async function service (t: Test) {
  const config = loadConfig({ GATEWAY_THREADS: '1', DATA_DIR: await createTempDir(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', OUTBOUND_ALLOWLIST: '127.0.0.1' })
  const s = await start(config, { logger: silentLogger })
  t.teardown(() => s.close())
  const token = await s.issueToken!('alice', 'editor')
  const m = `http://127.0.0.1:${s.managementPort}/api/v1`
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(m + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  return { s, api }
}

t.test('a published proxy with an enabled workflow answers from the workflow, run in the worker pool', async t => {
  const { s, api } = await service(t)
  const backend = await startBackend(t, (req, res) => {
    if (req.url === '/users/7') { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ name: 'Ada' })); return }
    res.statusCode = 404
    res.end('{}')
  })
  const c = (await api('POST', '/collections', { name: 'wf', base_path: '/wf', upstream_url: 'http://127.0.0.1:9', auth_required: false })).body
  const p = (await api('POST', '/proxies', { collection_id: c.id, name: 'user', methods: ['POST'], path: '/users/{id}', status: 'published' })).body
  const workflow = {
    nodes: [
      { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
      { id: 'f', name: 'fetch', type: 'http_request_node', settings: { url: `${backend.url}/users/{{trigger.params.id}}`, timeout_ms: 15000 } },
      { id: 'c', name: 'found', type: 'condition_node', settings: { conditions: [{ left: '{{fetch.response.status}}', operator: 'equals', right: 200 }] } },
      { id: 'ok', name: 'ok', type: 'response_node', settings: { status: 200, headers: { 'x-flow': 'yes' }, body: { user: '{{fetch.response.body.name}}', note: '{{trigger.request.body.note}}' } } },
      { id: 'no', name: 'no', type: 'response_node', settings: { status: 503, headers: { 'retry-after': '30' }, body: { error: 'unavailable' } } }
    ],
    edges: [
      { id: '1', source: 'trg', target: 'f' }, { id: '2', source: 'f', target: 'c' },
      { id: '3', source: 'c', target: 'ok', sourceHandle: 'true' }, { id: '4', source: 'c', target: 'no', sourceHandle: 'false' }
    ],
    runtime_settings: { timeout_ms: 30000 }
  }
  t.equal((await api('PUT', `/proxies/${p.id}/workflow`, { workflow, enabled: true })).status, 200)
  const g = `http://127.0.0.1:${s.gatewayPort}`
  let r = await fetch(`${g}/wf/users/7`, { method: 'POST', body: JSON.stringify({ note: '{{ 1 + 1 }}' }), headers: { 'content-type': 'application/json', connection: 'close' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('x-flow'), 'yes')
  t.type(r.headers.get('x-request-id'), 'string')
  t.same(await r.json(), { user: 'Ada', note: '{{ 1 + 1 }}' }, 'request data is never evaluated as an expression')
  r = await fetch(`${g}/wf/users/8`, { method: 'POST', headers: { connection: 'close' } })
  t.equal(r.status, 503, 'the workflow chose the status')
  t.equal(r.headers.get('retry-after'), '30')

  // Disabled again: the proxy forwards to its backend (here unreachable: 502).
  t.equal((await api('PUT', `/proxies/${p.id}/workflow`, { enabled: false })).status, 200)
  r = await fetch(`${g}/wf/users/7`, { method: 'POST', headers: { connection: 'close' } })
  t.equal(r.status, 502)
})

t.test('loop, code and XML nodes at the gateway: a SOAP backend answer is unwrapped, each line priced in the sandbox', async t => {
  const { s, api } = await service(t)
  const backend = await startBackend(t, (_req, res) => {
    res.setHeader('content-type', 'text/xml')
    res.end('<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><m:Prices xmlns:m="urn:p">' +
      '<m:Line sku="a">2.50</m:Line><m:Line sku="b">4</m:Line></m:Prices></soap:Body></soap:Envelope>')
  })
  const c = (await api('POST', '/collections', { name: 'soap', base_path: '/soap', upstream_url: 'http://127.0.0.1:9', auth_required: false })).body
  const p = (await api('POST', '/proxies', { collection_id: c.id, name: 'prices', methods: ['POST'], path: '/prices', status: 'published' })).body
  const workflow = {
    nodes: [
      { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
      { id: 'f', name: 'fetch', type: 'http_request_node', settings: { url: `${backend.url}/soap`, timeout_ms: 15000 } },
      { id: 'x', name: 'xml', type: 'xml_node', settings: { mode: 'xml_to_json', source: '{{ fetch.response.body }}', unwrap_soap: true } },
      { id: 'l', name: 'lines', type: 'loop_node', settings: { items: '{{ xml.output.Prices.Line }}' } },
      { id: 'c', name: 'price', type: 'code_node', settings: { code: "const line = $json['$item']; return { sku: line['@_sku'], total: Number(line['#text']) * $json['trg'].request.body.qty, input_sku: $input.first()['@_sku'] }" } },
      { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: { lines: '{{ lines.items }}' } } }
    ],
    edges: [
      { id: '1', source: 'trg', target: 'f' }, { id: '2', source: 'f', target: 'x' }, { id: '3', source: 'x', target: 'l' },
      { id: '4', source: 'l', target: 'c', sourceHandle: 'loop' }, { id: '5', source: 'c', target: 'l' },
      { id: '6', source: 'l', target: 'r', sourceHandle: 'done' }
    ],
    runtime_settings: { timeout_ms: 60000 }
  }
  t.equal((await api('PUT', `/proxies/${p.id}/workflow`, { workflow, enabled: true })).status, 200)
  const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/soap/prices`, { method: 'POST', body: JSON.stringify({ qty: 3 }), headers: { 'content-type': 'application/json', connection: 'close' } })
  const body = await r.json() as any
  t.equal(r.status, 200, JSON.stringify(body))
  t.same(body, { lines: [{ sku: 'a', total: 7.5, input_sku: 'a' }, { sku: 'b', total: 12, input_sku: 'b' }] })
})
