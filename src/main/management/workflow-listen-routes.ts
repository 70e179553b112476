/**
 * Trigger test-listen, a table over src/main/operations/listens.ts:
 *   POST   /workflows/:workflowId/trigger-test/listen            start (answers the session)
 *   GET    /workflows/:workflowId/trigger-test/:listenId/stream  Server-Sent Events
 *   DELETE /workflows/:workflowId/trigger-test/:listenId         stop waiting
 */
import { listenStreamOp, startListenOp, stopListenOp, type ListenDeps } from '../operations/listens.js'
import { op, type OperationRoute } from './operation-routes.js'

const BUILDER = { role: 'editor' as const, options: { audit: false as const } }
const base = '/api/v1/workflows/:workflowId/trigger-test'

export const workflowListenRoutes: ReadonlyArray<OperationRoute<ListenDeps>> = [
  op({
    method: 'POST',
    path: `${base}/listen`,
    ...BUILDER,
    body: { type: 'object', additionalProperties: false, properties: { timeout_seconds: { type: 'integer', minimum: 1, maximum: 600 } } },
    input: r => ({ workflowId: r.params.workflowId, timeoutSeconds: r.body?.timeout_seconds as number | undefined }),
    operation: startListenOp
  }),
  // The stream ends with the session; over MCP the answer is every frame.
  op({
    method: 'GET',
    path: `${base}/:listenId/stream`,
    role: 'editor',
    stream: {},
    input: r => ({ workflowId: r.params.workflowId, listenId: r.params.listenId, frames: r.frames, closed: r.closed, accepted: r.accepted }),
    operation: listenStreamOp
  }),
  op({ method: 'DELETE', path: `${base}/:listenId`, ...BUILDER, status: 204, input: r => ({ workflowId: r.params.workflowId, listenId: r.params.listenId }), operation: stopListenOp })
]
