/**
 * A definition compiled for running: the node map, the edges by source, the
 * trigger, the levels (graph.ts) and each node's settings template. A saved
 * definition arrives with a key (`<proxy_id>:<workflow_id>:<proxy version>`,
 * which changes with every save) and is compiled once per worker: the plan is
 * kept in a bounded LRU cache here. Unkeyed definitions (builder tests,
 * sub-workflows) are compiled per run.
 *
 * A plan is shared by every run of its definition, so nothing in it may hold
 * per-run state: templates are pure closures over the parsed expressions.
 */
import { compileSettings, type Template } from '../../common/expressions/template.js'
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../common/types.js'
import { buildLevels, type Level } from './graph.js'
import { isEntryTrigger, nodeType } from '../nodes/registry.js'
import type { RunTask } from './types.js'

export interface Plan {
  definition: WorkflowDefinition
  nodes: Map<string, WorkflowNode>
  /** Every edge by source (targets that exist only). */
  allOut: Map<string, WorkflowEdge[]>
  triggerNode: WorkflowNode | undefined
  top: Level
  /** Settings templates by node id, compiled on a node's first run (a bad expression stays that node's error). */
  templates: Map<string, Template>
}

/** Plans kept per worker: enough for every published workflow of a large gateway. */
export const PLAN_CACHE_SIZE = 256

const cache = new Map<string, Plan>()

export function compilePlan (def: WorkflowDefinition): Plan {
  const nodes = new Map(def.nodes.map(n => [n.id, n]))
  const allOut = new Map<string, WorkflowEdge[]>()
  for (const e of def.edges) if (nodes.has(e.target)) (allOut.get(e.source) ?? allOut.set(e.source, []).get(e.source)!).push(e)
  return { definition: def, nodes, allOut, triggerNode: def.nodes.find(n => isEntryTrigger(n.type)), top: buildLevels(def), templates: new Map() }
}

/**
 * The plan for a task: cached by `definition_key` when there is one. Undefined
 * when the task carries only a key this worker does not hold (the main thread
 * then sends the definition again).
 */
export function planFor (task: Pick<RunTask, 'definition' | 'definition_key'>): Plan | undefined {
  const key = task.definition_key
  if (key === undefined) return task.definition !== undefined ? compilePlan(task.definition) : undefined
  const hit = cache.get(key)
  if (hit !== undefined) {
    // Map order is insertion order: re-inserting marks the entry most recently used.
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  if (task.definition === undefined) return undefined
  const plan = compilePlan(task.definition)
  cache.set(key, plan)
  if (cache.size > PLAN_CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return plan
}

export function templateOf (plan: Plan, node: WorkflowNode): Template {
  let t = plan.templates.get(node.id)
  if (t === undefined) plan.templates.set(node.id, t = compileSettings(templated(node)))
  return t
}

/** Settings that hold expressions: all but the type's literal ones (code_node's code is JavaScript text). */
function templated (node: WorkflowNode): Record<string, unknown> {
  const s = node.settings ?? {}
  const literal = nodeType(node.type)?.literalSettings
  if (literal === undefined) return s
  return Object.fromEntries(Object.entries(s).filter(([k]) => !literal.includes(k)))
}
