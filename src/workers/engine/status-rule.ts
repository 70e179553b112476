/**
 * http_request_node's non-2xx rule at run time (src/common/status-handling.ts
 * decides which rule applies): a non-2xx answer fails the node unless the node
 * continues on error or a condition node downstream reads its status (then the
 * workflow handles the error itself). A timeout is not an error (`timedOut: true`).
 */
import type { WorkflowEdge, WorkflowNode } from '../../common/types.js'
import { describeStatusRule, statusRuleOf } from '../../common/status-handling.js'
import { NodeError, type NodeResult } from './types.js'

export function checkStatus (node: WorkflowNode, result: NodeResult, outEdges: Map<string, WorkflowEdge[]>, nodes: Map<string, WorkflowNode>): void {
  const out = result.output as { response?: { status?: number }, timedOut?: boolean }
  const st = out.response?.status ?? 0
  if (out.timedOut === true || (st >= 200 && st < 300)) return
  const rule = statusRuleOf(node, nodes, outEdges)
  if (rule.rule === 'fails') throw new NodeError(`The backend answered ${st}. ${describeStatusRule(node, rule)}`)
}
