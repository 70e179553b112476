/**
 * Sub-workflows a run may call: every workflow reachable through
 * execute_subworkflow nodes with a literal workflow_id, loaded from the store
 * before the task leaves for a worker (workers open no database connection).
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { savedDefinition } from '../store/workflows.js'
import type { Queryable } from '../store/types.js'

/** How deep execute_subworkflow may nest (the engine refuses deeper calls with a clear error). */
export const MAX_SUBWORKFLOW_DEPTH = 5

/** Literal ids only: an id given by an expression cannot be known before the run. */
const referenced = (def: WorkflowDefinition): string[] => def.nodes
  .map(n => n.type === 'execute_subworkflow' ? n.settings?.workflow_id : undefined)
  .filter((id): id is string => typeof id === 'string' && id !== '' && !id.includes('{{'))

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

/** Whether a definition (or one of its sub-workflows) uses a node type. */
export function usesNodeType (type: string, def: WorkflowDefinition, subs: Record<string, WorkflowDefinition> | null): boolean {
  return def.nodes.some(n => n.type === type) || Object.values(subs ?? {}).some(d => d.nodes.some(n => n.type === type))
}
