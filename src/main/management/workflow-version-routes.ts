/** Saved versions of a workflow: list (newest first) and restore (a new version, a proxy_workflow event). */
import { getWorkflowVersionOp, listWorkflowVersionsOp, restoreWorkflowVersionOp } from '../operations/workflows.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { pageQuery } from './validation.js'

const base = '/api/v1/workflows/:workflowId/versions'

export const workflowVersionRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  op({ method: 'GET', path: base, role: 'viewer', input: r => ({ page: pageQuery(r.query), workflowId: r.params.workflowId }), operation: listWorkflowVersionsOp }),
  op({ method: 'GET', path: `${base}/:versionId`, role: 'viewer', input: r => ({ workflowId: r.params.workflowId, versionId: r.params.versionId }), operation: getWorkflowVersionOp }),
  op({ method: 'POST', path: `${base}/:versionId/restore`, role: 'editor', etag: true, input: r => ({ workflowId: r.params.workflowId, versionId: r.params.versionId, ifMatch: r.ifMatch }), operation: restoreWorkflowVersionOp })
]
