/**
 * The builder's run routes (editor or admin; they emit no events and work while the workflow is
 * disabled), a table over src/main/operations/workflow-runs.ts:
 *   POST /workflows/:workflowId/test            run, answer the execution record
 *   POST /workflows/:workflowId/test/stream     the same as Server-Sent Events, node by node
 *   POST /workflows/:workflowId/execute-partial run up to / from a node; never stored
 *   POST /workflows/:workflowId/nodes/:nodeId/test  one node; never stored
 *   POST /workflows/:workflowId/manual-run      a manual_trigger workflow, as saved
 * The execution and listen routes are mounted with them (they need the same runner).
 */
import type { ExecutionRecord } from '../store/executions.js'
import type { Store } from '../store/types.js'
import type { Runner } from '../workflows/runner.js'
import type { CaptureTrigger } from '../triggers/test-capture.js'
import type { Logger } from '../logger.js'
import type { TriggerListens } from '../workflows/trigger-listen.js'
import { manualRunOp, nodeTestOp, partialRunOp, testRunOp, testRunStreamOp, type RunDeps } from '../operations/workflow-runs.js'
import { nodeTestBodySchema, runBodySchema } from '../workflows/run-request.js'
import { mountOperations, op, type OperationRoute } from './operation-routes.js'
import type { Router } from './router.js'
import { workflowListenRoutes } from './workflow-listen-routes.js'
import { workflowExecutionRoutes } from './workflow-execution-routes.js'

export interface WorkflowRunDeps { store: Store, runner: Runner, listens: TriggerListens, capture?: CaptureTrigger, logger?: Logger }

// Runs change nothing: the audit trail does not record them as changes.
const BUILDER = { role: 'editor' as const, options: { audit: false as const } }
const base = '/api/v1/workflows/:workflowId'

export const workflowRunRoutes: ReadonlyArray<OperationRoute<RunDeps>> = [
  op({ method: 'POST', path: `${base}/test`, ...BUILDER, body: runBodySchema, input: r => ({ workflowId: r.params.workflowId, fields: r.body }), operation: testRunOp }),
  // The head goes out with the first frame, so a refused run (a full mailbox) is still a plain error answer.
  op({
    method: 'POST',
    path: `${base}/test/stream`,
    ...BUILDER,
    body: runBodySchema,
    stream: { last: (record: ExecutionRecord) => ({ event: 'execution', data: record }) },
    input: r => ({ workflowId: r.params.workflowId, fields: r.body, frames: r.frames }),
    operation: testRunStreamOp
  }),
  op({ method: 'POST', path: `${base}/execute-partial`, ...BUILDER, body: runBodySchema, input: r => ({ workflowId: r.params.workflowId, fields: r.body }), operation: partialRunOp }),
  op({ method: 'POST', path: `${base}/nodes/:nodeId/test`, ...BUILDER, body: nodeTestBodySchema, input: r => ({ workflowId: r.params.workflowId, nodeId: r.params.nodeId, fields: r.body }), operation: nodeTestOp }),
  op({ method: 'POST', path: `${base}/manual-run`, role: 'editor', body: { type: 'object', additionalProperties: false, properties: {} }, input: r => ({ workflowId: r.params.workflowId }), operation: manualRunOp })
]

export function registerWorkflowRunRoutes (router: Router, deps: WorkflowRunDeps): void {
  mountOperations(router, deps, workflowExecutionRoutes)
  mountOperations(router, deps, workflowListenRoutes)
  mountOperations(router, deps, workflowRunRoutes)
}
