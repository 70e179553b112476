/** Builders shared by the engine tests. */
import type { RunTask } from '../../src/workers/engine/types.js'
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../src/common/types.js'

export const task = (definition: WorkflowDefinition, over: Partial<RunTask> = {}): RunTask => ({
  definition, workflow: { id: 'wf', name: 'test' }, execution_id: 'ex-1',
  trigger_output: { request: { method: 'POST', path: '/x', path_params: {}, query: {}, headers: {}, body: null } },
  deadline: Date.now() + 60_000, outbound_allowlist: [], ...over
})

/** A chain trigger → nodes… in order; extra edges may be appended. */
export function chain (nodes: Array<Omit<WorkflowNode, 'settings'> & { settings?: Record<string, unknown> }>, extra: WorkflowEdge[] = []): WorkflowDefinition {
  const all: WorkflowNode[] = [{ id: 't', name: 'trigger', type: 'manual_trigger', settings: {} }, ...nodes.map(n => ({ settings: {}, ...n }))]
  const edges: WorkflowEdge[] = []
  for (let i = 1; i < all.length; i++) edges.push({ id: `c${i}`, source: all[i - 1]!.id, target: all[i]!.id })
  return { nodes: all, edges: [...edges, ...extra] }
}
