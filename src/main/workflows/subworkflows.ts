/**
 * Sub-workflows a run may call: every workflow reachable through nodes that
 * call one (execute_subworkflow) with a literal workflow_id, loaded from the store
 * before the task leaves for a worker (workers open no database connection).
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { nodeType } from '../../workers/nodes/registry.js'
import { savedDefinition } from '../store/workflows.js'
import type { Queryable } from '../store/types.js'

/** How deep execute_subworkflow may nest (the engine refuses deeper calls with a clear error). */
export const MAX_SUBWORKFLOW_DEPTH = 5

/** Literal ids only (the node type's `needs.subworkflowId`): an id given by an expression cannot be known before the run. */
const referenced = (def: WorkflowDefinition): string[] => def.nodes
  .map(n => nodeType(n.type)?.needs?.subworkflowId?.(n.settings ?? {}))
  .filter((id): id is string => id !== undefined)

/** null when the definition calls no sub-workflow (the common case costs no query). */
export async function resolveSubworkflows (q: Queryable, def: WorkflowDefinition): Promise<Record<string, WorkflowDefinition> | null> {
  let frontier = referenced(def)
  if (frontier.length === 0) return null
  const found: Record<string, WorkflowDefinition> = {}
  for (let depth = 1; depth <= MAX_SUBWORKFLOW_DEPTH && frontier.length > 0; depth++) {
    const next: string[] = []
    for (const id of new Set(frontier)) {
      if (Object.prototype.hasOwnProperty.call(found, id)) continue
      const sub = await savedDefinition(q, id)
      if (sub === null) continue
      found[id] = sub
      next.push(...referenced(sub))
    }
    frontier = next
  }
  return found
}

/** Whether a node of a definition (or of one of its sub-workflows) needs the cpu lane or the cache. */
export function anyNodeNeeds (need: 'cpu' | 'cache', def: WorkflowDefinition, subs: Record<string, WorkflowDefinition> | null): boolean {
  const needs = (d: WorkflowDefinition) => d.nodes.some(n => nodeType(n.type)?.needs?.[need] === true)
  return needs(def) || Object.values(subs ?? {}).some(needs)
}

/** The credential ids the nodes of a definition (and of its sub-workflows) apply. */
export function credentialIdsOf (def: WorkflowDefinition, subs: Record<string, WorkflowDefinition> | null): string[] {
  const ids = new Set<string>()
  for (const d of [def, ...Object.values(subs ?? {})]) {
    for (const n of d.nodes) {
      const id = nodeType(n.type)?.needs?.credentialId?.(n.settings ?? {})
      if (id !== undefined) ids.add(id)
    }
  }
  return [...ids]
}
