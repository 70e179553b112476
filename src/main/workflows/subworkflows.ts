/**
 * Sub-workflows a run may call: every workflow reachable through
 * execute_subworkflow nodes with a literal workflow_id, loaded from the store
 * before the task leaves for a worker (workers open no database connection).
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { definitionsByWorkflowId } from '../store/workflows.js'
import type { Queryable } from '../store/types.js'

/** How deep execute_subworkflow may nest (the engine enforces the same bound). */
export const MAX_SUBWORKFLOW_DEPTH = 5

const referenced = (def: WorkflowDefinition): string[] => def.nodes
  .filter(n => n.type === 'execute_subworkflow' && typeof n.settings?.workflow_id === 'string' && !(n.settings.workflow_id).includes('{{'))
  .map(n => n.settings.workflow_id as string)

/** null when the definition calls no sub-workflow (the common case costs no query). */
export async function resolveSubworkflows (q: Queryable, def: WorkflowDefinition, selfId: string): Promise<Record<string, WorkflowDefinition> | null> {
  let wanted = referenced(def)
  if (wanted.length === 0) return null
  const found: Record<string, WorkflowDefinition> = {}
  for (let depth = 0; depth < MAX_SUBWORKFLOW_DEPTH && wanted.length > 0; depth++) {
    const proxies = await definitionsByWorkflowId(q, [...new Set(wanted)].filter(id => found[id] === undefined))
    const next: string[] = []
    for (const [id, p] of proxies) {
      if (p.workflow === null) continue
      found[id] = p.workflow
      next.push(...referenced(p.workflow).filter(x => found[x] === undefined && x !== selfId))
    }
    wanted = next
  }
  return found
}

/** Whether a definition (or one of its sub-workflows) uses a node type. */
export function usesNodeType (type: string, def: WorkflowDefinition, subs: Record<string, WorkflowDefinition> | null): boolean {
  return def.nodes.some(n => n.type === type) || Object.values(subs ?? {}).some(d => d.nodes.some(n => n.type === type))
}
