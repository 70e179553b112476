/** http_trigger: runs for every request that reaches the proxy; its output is the request (src/main/gateway/workflow-target.ts builds it). */
import { passTrigger, trigger } from './describe.js'
import type { NodeType } from './node-type.js'

export const httpTrigger: NodeType = {
  description: trigger('http_trigger', 'Runs for every request that reaches the proxy at the gateway.', {}, [],
    '{request: {method, path, path_params, query, headers, body}}; {{trigger.params.<name>}} reads a path parameter.'),
  run: passTrigger,
  startedBy: 'gateway',
  sampleOutput: () => ({ request: { method: 'GET', path: '/', path_params: {}, query: {}, headers: {}, body: null } })
}
