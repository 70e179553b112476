/**
 * Which rule decides what a node's non-2xx HTTP answer does, known before a run
 * from the definition alone:
 *   continue_on_error  the node's `continue_on_error` setting is true: the
 *                      answer is output as any other, the run goes on;
 *   condition          a node that handles statuses (a condition) anywhere
 *                      downstream (any number of nodes later) reads the node's
 *                      `response.status`: the workflow handles the error itself;
 *   fails              neither: the answer fails the run (the spec's default).
 * The engine applies it on a non-2xx answer; validation reports it per node.
 * Which types answer HTTP and which handle statuses, their own modules say
 * (src/workers/nodes/: `statusRule`, `handlesStatus`); it is passed in as a
 * lookup, so this module names no node type. Pure: both threads import it.
 */
import type { WorkflowEdge, WorkflowNode } from './types.js'

/** What a node type says about statuses (NodeType in src/workers/nodes/node-type.ts has these fields). */
export interface StatusTraits {
  /** Its output is an HTTP answer, and a non-2xx one follows the rule below. */
  statusRule?: boolean
  /** Reading an upstream answer's `response.status` in its settings handles that answer's non-2xx status. */
  handlesStatus?: boolean
}

/** A node type's traits by its name (the node registry's lookup). */
export type StatusTraitsOf = (type: string) => StatusTraits | undefined

export type StatusRule =
  | { rule: 'continue_on_error' }
  | { rule: 'condition', condition_node_id: string, condition_name: string }
  | { rule: 'fails' }

/** The rule for `node`; `outEdges` maps a node id to the edges leaving it. */
export function statusRuleOf (node: WorkflowNode, nodes: ReadonlyMap<string, WorkflowNode>, outEdges: ReadonlyMap<string, readonly WorkflowEdge[]>, traitsOf: StatusTraitsOf): StatusRule {
  if (node.settings?.continue_on_error === true) return { rule: 'continue_on_error' }
  const refs = [`${node.name}.response.status`, `['${node.name}'].response.status`, `["${node.name}"].response.status`, `['${node.id}'].response.status`, `["${node.id}"].response.status`]
  // Breadth-first over every outgoing edge (any handle, loop bodies included); each node once.
  const seen = new Set<string>([node.id])
  const queue = [node.id]
  while (queue.length > 0) {
    for (const e of outEdges.get(queue.shift()!) ?? []) {
      if (seen.has(e.target)) continue
      seen.add(e.target)
      const next = nodes.get(e.target)
      if (next === undefined) continue
      if (traitsOf(next.type)?.handlesStatus === true && readsAny(next, refs)) return { rule: 'condition', condition_node_id: next.id, condition_name: next.name }
      queue.push(next.id)
    }
  }
  return { rule: 'fails' }
}

/** The sentence a builder shows on the node. */
export function describeStatusRule (node: WorkflowNode, r: StatusRule): string {
  if (r.rule === 'continue_on_error') return `Node '${node.name}': a non-2xx answer does not fail the run (continue_on_error is on); later nodes read {{${node.name}.response.status}}.`
  if (r.rule === 'condition') return `Node '${node.name}': a non-2xx answer is handled by condition '${r.condition_name}', which reads {{${node.name}.response.status}}.`
  return `Node '${node.name}': a non-2xx answer fails the run; add a condition on {{${node.name}.response.status}} after it, or turn on continue_on_error, to handle it.`
}

/** Every edge by source, as statusRuleOf takes them. */
export function edgesBySource (edges: readonly WorkflowEdge[]): Map<string, WorkflowEdge[]> {
  const out = new Map<string, WorkflowEdge[]>()
  for (const e of edges) (out.get(e.source) ?? out.set(e.source, []).get(e.source)!).push(e)
  return out
}

function readsAny (n: WorkflowNode, refs: string[]): boolean {
  const text = JSON.stringify(n.settings ?? {}).replace(/\s+/g, '').replace(/\\"/g, '"')
  return refs.some(r => text.includes(r.replace(/\s+/g, '')))
}

export interface StatusRuleNote { node_id: string, rule: StatusRule['rule'], condition_node_id?: string, message: string }

/** The rule of every node of a definition whose type answers HTTP, as validation answers it. */
export function statusRules (def: { nodes: readonly WorkflowNode[], edges: readonly WorkflowEdge[] }, traitsOf: StatusTraitsOf): StatusRuleNote[] {
  const nodes = new Map(def.nodes.map(n => [n.id, n]))
  const out = edgesBySource(def.edges)
  return def.nodes.filter(n => traitsOf(n.type)?.statusRule === true).map(n => {
    const r = statusRuleOf(n, nodes, out, traitsOf)
    return { node_id: n.id, rule: r.rule, ...(r.rule === 'condition' ? { condition_node_id: r.condition_node_id } : {}), message: describeStatusRule(n, r) }
  })
}
