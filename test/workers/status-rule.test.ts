/**
 * An http_request_node's non-2xx answer: handled by a condition anywhere downstream that reads
 * its status, or by continue_on_error; otherwise the run fails at the node, saying how to handle it.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { runWorkflow } from '../../src/workers/engine/run.js'
import type { WorkflowDefinition } from '../../src/common/types.js'

async function backend (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const server = http.createServer((req, res) => { res.statusCode = 404; res.setHeader('content-type', 'application/json'); res.end('{"error":"missing"}') })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const run = async (definition: WorkflowDefinition) => await runWorkflow({
  definition, workflow: { id: 'wf' }, execution_id: 'ex', trigger_output: { triggered_at: 'now', trigger: 'manual' },
  deadline: Date.now() + 10_000, outbound_allowlist: ['127.0.0.1']
})

/** trigger -> fetch -> tidy (set) -> note (set) -> check (condition on `left`) -> ok | failed */
const later = (url: string, left: string, fetchSettings: Record<string, unknown> = {}): WorkflowDefinition => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'manual_trigger', settings: {} },
    { id: 'f', name: 'fetch', type: 'http_request_node', settings: { url: `${url}/x`, timeout_ms: 5000, ...fetchSettings } },
    { id: 's', name: 'tidy', type: 'set_node', settings: { values: { seen: true } } },
    { id: 's2', name: 'note', type: 'set_node', settings: { values: { more: 1 } } },
    { id: 'c', name: 'check', type: 'condition_node', settings: { conditions: [{ left, operator: 'equals', right: 200 }] } },
    { id: 'ok', name: 'ok', type: 'response_node', settings: { status: 200, body: 'fine' } },
    { id: 'bad', name: 'failed', type: 'response_node', settings: { status: 502, body: 'upstream said {{fetch.response.status}}' } }
  ],
  edges: [
    { id: 'e1', source: 'trg', target: 'f' },
    { id: 'e2', source: 'f', target: 's' },
    { id: 'e3', source: 's', target: 's2' },
    { id: 'e4', source: 's2', target: 'c' },
    { id: 'e5', source: 'c', target: 'ok', sourceHandle: 'true' },
    { id: 'e6', source: 'c', target: 'bad', sourceHandle: 'false' }
  ]
})

t.test('a condition two nodes further on that reads the status handles a 404', async t => {
  const url = await backend(t)
  const r = await run(later(url, '{{fetch.response.status}}'))
  t.equal(r.status, 'success', JSON.stringify(r.error))
  t.same(r.response, { status: 502, headers: {}, body: 'upstream said 404' })
  t.same(r.nodes.map(n => n.node_id), ['trg', 'f', 's', 's2', 'c', 'bad'])
  const byId = await run(later(url, "{{ $json['f'].response.status }}"))
  t.equal(byId.status, 'success', 'a reference by id counts too')
})

t.test('continue_on_error: the answer is output and the run goes on', async t => {
  const url = await backend(t)
  const def: WorkflowDefinition = {
    nodes: [
      { id: 'trg', name: 'trigger', type: 'manual_trigger', settings: {} },
      { id: 'f', name: 'fetch', type: 'http_request_node', settings: { url: `${url}/x`, continue_on_error: true } },
      { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: { upstream: '{{fetch.response.status}}', error: '{{fetch.response.body.error}}' } } }
    ],
    edges: [{ id: 'e1', source: 'trg', target: 'f' }, { id: 'e2', source: 'f', target: 'r' }]
  }
  const r = await run(def)
  t.equal(r.status, 'success', JSON.stringify(r.error))
  t.same(r.response?.body, { upstream: 404, error: 'missing' })
})

t.test('without either, the run fails at the node and the message says how to handle it', async t => {
  const url = await backend(t)
  const r = await run(later(url, '{{ tidy.output.seen }}'))
  t.equal(r.status, 'error')
  t.equal(r.error?.node_id, 'f')
  t.match(r.error?.message, /The backend answered 404\. Node 'fetch': a non-2xx answer fails the run; add a condition on \{\{fetch\.response\.status\}\} after it, or turn on continue_on_error/)
  const off = await run(later(url, '{{ tidy.output.seen }}', { continue_on_error: false }))
  t.equal(off.status, 'error', 'continue_on_error false is the default rule')
})
