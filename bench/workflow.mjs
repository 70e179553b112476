// The workflow the benchmarks run: http_trigger -> set_node -> response_node.
export const BENCH_WORKFLOW = {
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'set', name: 'shape', type: 'set_node', settings: { values: { id: '{{trigger.params.id}}', source: 'workflow', method: '{{trigger.request.method}}' } } },
    { id: 'res', name: 'answer', type: 'response_node', settings: { status: 200, headers: { 'content-type': 'application/json' }, body: '{{shape.output}}' } }
  ],
  edges: [{ id: 'e1', source: 'trg', target: 'set' }, { id: 'e2', source: 'set', target: 'res' }],
  runtime_settings: { timeout_ms: 30000, save_on_success: false, save_on_error: false }
}

/** What the gateway hands the workflow for GET /flow/items/7 (the engine benchmark runs it directly). */
export const BENCH_TRIGGER = {
  request: { method: 'GET', path: '/flow/items/7', path_params: { id: '7' }, query: {}, headers: { host: '127.0.0.1', 'user-agent': 'wrk' }, body: null }
}
