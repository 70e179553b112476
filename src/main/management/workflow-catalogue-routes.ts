/** The node catalogue over the API: each node type's settings schema, outputs and edge-authoring hints. */
import { notFound } from '../../common/errors.js'
import { describeNode, NODE_CATALOGUE } from '../../common/workflow-catalogue.js'
import type { Router } from './router.js'

export function registerWorkflowCatalogueRoutes (router: Router): void {
  router.add('GET', '/api/v1/workflows/nodes', async () => ({ status: 200, body: { items: NODE_CATALOGUE, next_cursor: null } }), { role: 'viewer' })
  router.add('GET', '/api/v1/workflows/nodes/:type', async ctx => {
    const d = describeNode(ctx.params.type)
    if (d === undefined) throw notFound(`Node type '${ctx.params.type}' does not exist; GET /api/v1/workflows/nodes lists them.`)
    return { status: 200, body: d }
  }, { role: 'viewer' })
}
