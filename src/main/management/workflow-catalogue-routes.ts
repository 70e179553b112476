/** The node catalogue over the API: each node type's settings schema, outputs and edge-authoring hints. */
import { getNodeTypeOp, listNodeTypesOp } from '../operations/workflows.js'
import { op, type OperationRoute } from './operation-routes.js'

export const workflowCatalogueRoutes: ReadonlyArray<OperationRoute<unknown>> = [
  op({ method: 'GET', path: '/api/v1/workflows/nodes', role: 'viewer', input: () => ({}), operation: listNodeTypesOp }),
  op({ method: 'GET', path: '/api/v1/workflows/nodes/:type', role: 'viewer', input: r => ({ type: r.params.type }), operation: getNodeTypeOp })
]
