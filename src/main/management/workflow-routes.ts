/** A proxy's workflow (read, save, validate), its versions and the node catalogue: tables over src/main/operations/workflows.ts. */
import { getWorkflowOp, saveWorkflowOp, validateWorkflowOp } from '../operations/workflows.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { workflowCatalogueRoutes } from './workflow-catalogue-routes.js'
import { workflowVersionRoutes } from './workflow-version-routes.js'

const saveSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    workflow: { type: ['object', 'null'] },
    definition: { type: ['object', 'null'] },
    enabled: { type: 'boolean' },
    // The name the GET answer uses: a client may send back what it read.
    workflow_enabled: { type: 'boolean' }
  }
}
/**
 * Fields a save ignores: those of the GET answer, so a read-modify-write round trip is
 * accepted, and `pinned_outputs`, which the spec says are not persisted on save (a builder
 * sends its pins along with the definition; they only feed test and partial runs).
 */
const WORKFLOW_READ_ONLY = ['proxy_id', 'workflow_id', 'version_id', 'version_number', 'pinned_outputs']

const path = '/api/v1/proxies/:id/workflow'

/** PUT /proxies/:id/workflow saves a definition and/or the enabled flag, independently. */
export const workflowRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  ...workflowCatalogueRoutes,
  ...workflowVersionRoutes,
  op({ method: 'PUT', path, role: 'editor', body: saveSchema, options: { readOnly: WORKFLOW_READ_ONLY }, etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: saveWorkflowOp }),
  op({ method: 'GET', path, etag: true, input: r => ({ id: r.params.id }), operation: getWorkflowOp }),
  op({ method: 'POST', path: `${path}/validate`, role: 'editor', body: saveSchema, options: { readOnly: WORKFLOW_READ_ONLY }, input: r => ({ id: r.params.id, fields: r.body }), operation: validateWorkflowOp })
]
