/**
 * Sub-workflows a run may call, loaded from the store before the task leaves
 * for a worker (workers open no database connection). The walk itself (depth
 * bound, expression ids skipped) is the pool's collectSubworkflows.
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { savedDefinition } from '../store/workflows.js'
import type { Queryable } from '../store/types.js'
import { collectSubworkflows } from './pool.js'

/** null when the definition calls no sub-workflow (the common case costs no query). */
export async function resolveSubworkflows (q: Queryable, def: WorkflowDefinition): Promise<Record<string, WorkflowDefinition> | null> {
  if (!def.nodes.some(n => n.type === 'execute_subworkflow')) return null
  return await collectSubworkflows(def, async id => await savedDefinition(q, id))
}

/** Whether a definition (or one of its sub-workflows) uses a node type. */
export function usesNodeType (type: string, def: WorkflowDefinition, subs: Record<string, WorkflowDefinition> | null): boolean {
  return def.nodes.some(n => n.type === type) || Object.values(subs ?? {}).some(d => d.nodes.some(n => n.type === type))
}
