/**
 * http_request_node's non-2xx rule: a non-2xx answer fails the node unless a
 * condition node right after it looks at its status (then the workflow handles
 * the error itself). A timeout is not an error (`timedOut: true`).
 */
import type { WorkflowEdge, WorkflowNode } from '../../common/types.js'
import { NodeError, type NodeResult } from './types.js'

export function checkStatus (node: WorkflowNode, result: NodeResult, outEdges: Map<string, WorkflowEdge[]>, nodes: Map<string, WorkflowNode>): void {
  const out = result.output as { response?: { status?: number }, timedOut?: boolean }
  const st = out.response?.status ?? 0
  if (out.timedOut === true || (st >= 200 && st < 300)) return
  const handled = (outEdges.get(node.id) ?? []).some(e => {
    const next = nodes.get(e.target)
    if (next?.type !== 'condition_node') return false
    const text = JSON.stringify(next.settings ?? {})
    return text.includes(`${node.name}.response.status`) || text.includes(`['${node.id}'].response.status`) || text.includes(`["${node.id}"].response.status`)
  })
  if (!handled) throw new NodeError(`The backend answered ${st}; add a condition on {{${node.name}.response.status}} to handle it.`)
}
