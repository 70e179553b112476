/**
 * Graph rules of a workflow definition: edge handles valid for the source node's
 * type, no edges into a trigger, every node reachable
 * from the trigger, and cycles only through a loop node's per-item edge.
 */
import type { WorkflowDefinition, WorkflowNode } from '../../common/types.js'
import { describeNode, sourceHandlesOf } from '../../common/workflow-catalogue.js'
import { isBodyHandle } from '../../workers/nodes/registry.js'
import type { WorkflowProblem } from './definition.js'

const handleText = (h: string | null | undefined) => h === null || h === undefined || h === '' ? 'no sourceHandle' : `sourceHandle '${h}'`

export function checkEdges (d: WorkflowDefinition, nodes: Map<string, WorkflowNode>): WorkflowProblem[] {
  const problems: WorkflowProblem[] = []
  for (const e of d.edges) {
    const src = nodes.get(e.source)
    const dst = nodes.get(e.target)
    if (src === undefined || dst === undefined) continue // reported by the structural checks
    const where = { node_id: src.id, field: `edges.${e.id ?? `${e.source}->${e.target}`}` }
    const handle = e.sourceHandle ?? ''
    const allowed = sourceHandlesOf(src)
    // A single-output node ignores the handle (editors name it differently); branching nodes route by it.
    if (allowed !== null && (!allowed.handles.includes(handle) || (handle === '' && allowed.required))) {
      const names = allowed.handles.filter(h => h !== '').map(h => `'${h}'`).join(' or ')
      problems.push({ ...where, message: `The edge from '${src.name}' (${src.type}) to '${dst.name}' has ${handleText(e.sourceHandle)}; use ${names}.` })
    }
    if (describeNode(dst.type)?.entry_trigger === true) {
      problems.push({ node_id: dst.id, field: where.field, message: `Trigger '${dst.name}' starts the workflow and cannot have incoming edges (one comes from '${src.name}').` })
    }
  }
  return problems
}

/** Nodes no path from a trigger reaches. */
export function checkReachable (d: WorkflowDefinition, triggers: WorkflowNode[]): WorkflowProblem[] {
  const out = adjacency(d, () => true)
  const seen = new Set<string>(triggers.map(n => n.id))
  const todo = [...seen]
  while (todo.length > 0) {
    for (const next of out.get(todo.pop()!) ?? []) if (!seen.has(next)) { seen.add(next); todo.push(next) }
  }
  return d.nodes.filter(n => !seen.has(n.id)).map(n => ({
    node_id: n.id, field: null, message: `Node '${n.name}' is not reachable from the trigger '${triggers[0]?.name ?? ''}'; connect it or remove it.`
  }))
}

/**
 * Every cycle must pass through a loop node's per-item edge (`loop` or empty; a type's `bodyHandles`):
 * without those edges the graph must be acyclic. One problem per cycle found.
 */
export function checkCycles (d: WorkflowDefinition, nodes: Map<string, WorkflowNode>): WorkflowProblem[] {
  const isLoopBody = (source: string, handle: string | null | undefined) => isBodyHandle(nodes.get(source)?.type ?? '', handle)
  const out = adjacency(d, (source, handle) => !isLoopBody(source, handle))
  const state = new Map<string, 1 | 2>() // 1: on the current path, 2: done
  const problems: WorkflowProblem[] = []
  const path: string[] = []
  const visit = (id: string): void => {
    state.set(id, 1)
    path.push(id)
    for (const next of out.get(id) ?? []) {
      const s = state.get(next)
      if (s === 1) {
        const cycle = path.slice(path.indexOf(next)).map(x => nodes.get(x)!.name)
        problems.push({ node_id: next, field: 'edges', message: `The edges form a cycle (${[...cycle, cycle[0]].join(' -> ')}); only a loop_node's "loop" edge may lead back.` })
      } else if (s === undefined) visit(next)
    }
    path.pop()
    state.set(id, 2)
  }
  for (const n of d.nodes) if (!state.has(n.id)) visit(n.id)
  return problems
}

function adjacency (d: WorkflowDefinition, keep: (source: string, handle: string | null | undefined) => boolean): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const e of d.edges) {
    if (!keep(e.source, e.sourceHandle)) continue
    const list = out.get(e.source)
    if (list === undefined) out.set(e.source, [e.target])
    else list.push(e.target)
  }
  return out
}
