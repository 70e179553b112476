/** Execution records of a workflow (list, read one, replay one): a table over src/main/operations/executions.ts. */
import { getExecutionOp, listExecutionsOp, replayExecutionOp, type ExecutionDeps } from '../operations/executions.js'
import { op, type OperationRoute } from './operation-routes.js'
import { pageQuery } from './validation.js'

const base = '/api/v1/workflows/:workflowId/executions'

export const workflowExecutionRoutes: ReadonlyArray<OperationRoute<ExecutionDeps>> = [
  op({
    method: 'GET',
    path: base,
    role: 'viewer',
    input: r => ({ page: pageQuery(r.query, { filters: ['status', 'mode'] }), workflowId: r.params.workflowId, status: r.query.get('status') ?? undefined, mode: r.query.get('mode') ?? undefined }),
    operation: listExecutionsOp
  }),
  op({ method: 'GET', path: `${base}/:executionId`, role: 'viewer', input: r => ({ workflowId: r.params.workflowId, executionId: r.params.executionId }), operation: getExecutionOp }),
  // Runs the current saved definition again with the stored trigger output; answers the new record.
  op({
    method: 'POST',
    path: `${base}/:executionId/replay`,
    role: 'editor',
    body: { type: 'object', additionalProperties: false, properties: {} },
    input: r => ({ workflowId: r.params.workflowId, executionId: r.params.executionId }),
    operation: replayExecutionOp
  })
]
