import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { RunTask } from '../../src/workers/engine/types.js'
import type { WorkflowDefinition } from '../../src/common/types.js'

async function backend (t: { teardown (fn: () => unknown): void }) {
  const server = http.createServer((req, res) => {
    if (req.url!.startsWith('/users/7')) { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ id: 7, name: 'Ada' })); return }
    if (req.url === '/redirect-home') { res.writeHead(302, { location: 'http://127.0.0.1:1/x' }); res.end(); return }
    if (req.url === '/slow') { setTimeout(() => res.end('late'), 2000); return }
    if (req.url === '/echo') { let b = ''; req.on('data', c => { b += c }); req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ type: req.headers['content-type'], body: b })) }); return }
    res.statusCode = 404
    res.end('{"error":"missing"}')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const task = (definition: WorkflowDefinition, over: Partial<RunTask> = {}): RunTask => ({
  definition, workflow: { id: 'wf' }, execution_id: 'ex',
  trigger_output: { request: { method: 'GET', path: '/u/7', path_params: { id: '7' }, query: {}, headers: {}, body: null } },
  deadline: Date.now() + 5000, outbound_allowlist: ['127.0.0.1'], ...over
})

const flow = (url: string, status = '{{fetch.response.status}}'): WorkflowDefinition => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'f', name: 'fetch', type: 'http_request_node', settings: { method: 'GET', url: `${url}/users/{{trigger.params.id}}`, timeout_ms: 1000 } },
    { id: 'c', name: 'found', type: 'condition_node', settings: { conditions: [{ left: status, operator: 'equals', right: 200 }] } },
    { id: 'ok', name: 'ok', type: 'response_node', settings: { status: 200, headers: { 'x-from': 'workflow' }, body: { user: '{{fetch.response.body.name}}' } } },
    { id: 'no', name: 'missing', type: 'response_node', settings: { status: 503, headers: { 'retry-after': '30' }, body: 'try later' } }
  ],
  edges: [
    { id: 'e1', source: 'trg', target: 'f' },
    { id: 'e2', source: 'f', target: 'c' },
    { id: 'e3', source: 'c', target: 'ok', sourceHandle: 'true' },
    { id: 'e4', source: 'c', target: 'no', sourceHandle: 'false' }
  ]
})

t.test('http_request -> condition -> response against a real backend', async t => {
  const url = await backend(t)
  let r = await runWorkflow(task(flow(url)))
  t.equal(r.status, 'success')
  t.same(r.response, { status: 200, headers: { 'x-from': 'workflow' }, body: { user: 'Ada' } })
  t.same(r.nodes.map(n => n.node_id), ['trg', 'f', 'c', 'ok'], 'the false branch never ran')
  t.same((r.node_inputs as any).c.response.body, { id: 7, name: 'Ada' }, 'node inputs are recorded')
  r = await runWorkflow(task(flow(url), { trigger_output: { request: { path_params: { id: '9' } } } }))
  t.equal(r.status, 'success', 'a 404 handled by a condition on the status is not an error')
  t.same(r.response, { status: 503, headers: { 'retry-after': '30' }, body: 'try later' })
})

t.test('a non-2xx answer without a status condition fails the run at that node', async t => {
  const url = await backend(t)
  const def = flow(url, '{{ 1 }}')
  const r = await runWorkflow(task(def, { trigger_output: { request: { path_params: { id: '9' } } } }))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'f')
  t.match(r.error?.message, /answered 404/)
})

t.test('outbound guard: loopback in any notation and redirects to it are refused', async t => {
  const url = await backend(t)
  const port = new URL(url).port
  for (const target of [`http://127.0.0.1:${port}/users/7`, `http://[::ffff:127.0.0.1]:${port}/users/7`, `http://2130706433:${port}/users/7`, `http://0x7f000001:${port}/users/7`, `http://localhost:${port}/users/7`, 'http://169.254.169.254/latest/meta-data', 'http://[::1]:9/', `http://[::127.0.0.1]:${port}/`, `http://[::ffff:7f00:1]:${port}/`, 'http://[fd00::1]:9/', 'http://[fe80::1]:9/', 'http://[64:ff9b::a9fe:a9fe]/']) {
    const def: WorkflowDefinition = {
      nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'h', name: 'h', type: 'http_request_node', settings: { url: target, timeout_ms: 1000 } }],
      edges: [{ id: 'e', source: 't', target: 'h' }]
    }
    const r = await runWorkflow(task(def, { outbound_allowlist: [] }))
    t.equal(r.status, 'error', target)
    t.match(r.error?.message, /not allowed/, target)
  }
  // An allowed host (by name) redirecting to a loopback address that is not allowed.
  const def: WorkflowDefinition = {
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'h', name: 'h', type: 'http_request_node', settings: { url: `http://localhost:${port}/redirect-home` } }],
    edges: [{ id: 'e', source: 't', target: 'h' }]
  }
  const r = await runWorkflow(task(def, { outbound_allowlist: ['localhost'] }))
  t.equal(r.status, 'error')
  t.match(r.error?.message, /127\.0\.0\.1 is not allowed/, 'the redirect hop is checked too')

  // IPv6 ranges in the allowlist: a whole /64 admits its addresses, and only those.
  const v6 = await runWorkflow(task({
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'h', name: 'h', type: 'http_request_node', settings: { url: `http://[::1]:${port}/users/7`, timeout_ms: 1000 } }],
    edges: [{ id: 'e', source: 't', target: 'h' }]
  }, { outbound_allowlist: ['::/64'] }))
  t.not(v6.error?.message ?? '', /not allowed/, '::1 is inside an allowlisted ::/64')
  const outside = await runWorkflow(task({
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'h', name: 'h', type: 'http_request_node', settings: { url: `http://[::1]:${port}/users/7`, timeout_ms: 1000 } }],
    edges: [{ id: 'e', source: 't', target: 'h' }]
  }, { outbound_allowlist: ['fd00::/8'] }))
  t.match(outside.error?.message, /not allowed/, 'a range that does not hold it does not help')
})

t.test('outbound guard: address classes in every notation', async t => {
  const { isBlockedAddress, parseAllowlist, allowed } = await import('../../src/workers/nodes/outbound-guard.js')
  for (const ip of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', '::', '::127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:a9fe:a9fe', 'fd12::1', 'fe80::1', 'ff02::1', '64:ff9b::7f00:1', 'not-an-ip']) t.ok(isBlockedAddress(ip), `${ip} blocked`)
  for (const ip of ['93.184.216.34', '2606:4700::1111', '::ffff:93.184.216.34']) t.notOk(isBlockedAddress(ip), `${ip} allowed`)
  const list = parseAllowlist(['fd00:1::/32', '[fe80::5]', '10.0.0.0/8', 'internal.example'])
  t.ok(allowed(list, 'x', 'fd00:1:2::9'))
  t.notOk(allowed(list, 'x', 'fd00:2::9'))
  t.ok(allowed(list, 'x', 'fe80::5'))
  t.ok(allowed(list, 'x', '10.9.9.9'))
  t.ok(allowed(list, 'internal.example', '10.200.0.1'))
})

t.test('bodies: json, form_data, multipart', async t => {
  const url = await backend(t)
  const mk = (body: unknown): WorkflowDefinition => ({
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'h', name: 'h', type: 'http_request_node', settings: { method: 'POST', url: `${url}/echo`, body } }],
    edges: [{ id: 'e', source: 't', target: 'h' }]
  })
  let r = await runWorkflow(task(mk({ type: 'form_data', content: { a: '1', b: 'x y' } })))
  t.same((r.response!.body as any).response.body, { type: 'application/x-www-form-urlencoded', body: 'a=1&b=x+y' })
  r = await runWorkflow(task(mk({ type: 'multipart', content: { fields: { note: 'hi' }, files: [{ name: 'f', filename: 'a.txt', content_type: 'text/plain', data_base64: Buffer.from('file!').toString('base64') }] } })))
  const echoed = (r.response!.body as any).response.body
  t.match(echoed.type, /^multipart\/form-data; boundary=/)
  t.match(echoed.body, /name="note"\r\n\r\nhi/)
  t.match(echoed.body, /filename="a.txt"\r\ncontent-type: text\/plain\r\n\r\nfile!/)
  r = await runWorkflow(task(mk({ type: 'json', content: { n: '{{ 1 + 1 }}' } })))
  t.same((r.response!.body as any).response.body, { type: 'application/json', body: '{"n":2}' })
})

t.test('timeouts: node timedOut flag, and the run deadline', async t => {
  const url = await backend(t)
  let def: WorkflowDefinition = {
    nodes: [
      { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'h', name: 'slow', type: 'http_request_node', settings: { url: `${url}/slow`, timeout_ms: 100 } },
      { id: 's', name: 'shape', type: 'set_node', settings: { values: { late: '{{slow.timedOut}}' } } }
    ],
    edges: [{ id: 'e1', source: 't', target: 'h' }, { id: 'e2', source: 'h', target: 's' }]
  }
  let r = await runWorkflow(task(def))
  t.equal(r.status, 'success')
  t.same(r.response!.body, { output: { late: true } })
  def = {
    nodes: [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, { id: 'd', name: 'wait', type: 'delay_node', settings: { delay_ms: 5000 } }],
    edges: [{ id: 'e', source: 't', target: 'd' }]
  }
  r = await runWorkflow(task(def, { deadline: Date.now() + 150 }))
  t.equal(r.status, 'timeout')
  t.equal(r.error?.node_id, 'd')
})

t.test('parallel branches meet at a merge; partial runs use pinned outputs', async t => {
  const def: WorkflowDefinition = {
    nodes: [
      { id: 't', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'p', name: 'fan', type: 'parallel_node', settings: { branches: 2 } },
      { id: 'a', name: 'a', type: 'set_node', settings: { values: { v: 'A' } } },
      { id: 'b', name: 'b', type: 'delay_node', settings: { delay_ms: 20 } },
      { id: 'm', name: 'join', type: 'merge_node', settings: {} },
      { id: 'r', name: 'reply', type: 'response_node', settings: { status: 201, body: '{{ join.items.length }} parts, a={{ a.output.v }}' } }
    ],
    edges: [
      { id: '1', source: 't', target: 'p' }, { id: '2', source: 'p', target: 'a' }, { id: '3', source: 'p', target: 'b' },
      { id: '4', source: 'a', target: 'm' }, { id: '5', source: 'b', target: 'm' }, { id: '6', source: 'm', target: 'r' }
    ]
  }
  let r = await runWorkflow(task(def))
  t.equal(r.status, 'success')
  t.same(r.response, { status: 201, headers: {}, body: '2 parts, a=A' })
  r = await runWorkflow(task(def, { pinned_outputs: { a: { output: { v: 'pinned' } } }, destination_node: 'm' }))
  t.equal(r.nodes.find(n => n.node_id === 'a')!.status, 'pinned')
  t.notOk(r.nodes.some(n => n.node_id === 'r'), 'stops at the destination node')
  r = await runWorkflow(task(def, { start_node: 'r', pinned_outputs: { m: { items: [1, 2, 3] }, a: { output: { v: 'Z' } } } }))
  t.same(r.response!.body, '3 parts, a=Z', 'a run from a node reads pinned upstream outputs')
})
