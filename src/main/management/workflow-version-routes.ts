/** Saved versions of a workflow: list (newest first) and restore (a new version, a proxy_workflow event). */
import { getProxyByWorkflowId } from '../store/workflows.js'
import { getWorkflowVersion, listWorkflowVersions } from '../store/workflow-versions.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { pageQuery, etag } from './validation.js'
import { saveWorkflow, workflowBody } from '../workflows/save.js'

export function registerWorkflowVersionRoutes (router: Router, deps: ManagementDeps): void {
  router.add('GET', '/api/v1/workflows/:workflowId/versions', async ctx => {
    const pq = pageQuery(ctx.query)
    await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    return { status: 200, body: await listWorkflowVersions(deps.store, ctx.params.workflowId, pq) }
  }, { role: 'viewer' })

  router.add('GET', '/api/v1/workflows/:workflowId/versions/:versionId', async ctx => {
    await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    return { status: 200, body: await getWorkflowVersion(deps.store, ctx.params.workflowId, ctx.params.versionId) }
  }, { role: 'viewer' })

  // Restores the definition only: the enabled flag stays as it is (restoring never switches production on or off).
  router.add('POST', '/api/v1/workflows/:workflowId/versions/:versionId/restore', async ctx => {
    const proxy = await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    const from = await getWorkflowVersion(deps.store, ctx.params.workflowId, ctx.params.versionId)
    const { proxy: after, version } = await saveWorkflow(deps, {
      proxyId: proxy.id, definition: from.definition, actorSub: ctx.user?.sub ?? null, ifMatch: ctx.ifMatch, restoredFrom: from.id
    })
    return { status: 200, body: { ...workflowBody(after, version), restored_from: { id: from.id, number: from.number } }, headers: etag(after.version) }
  }, { role: 'editor' })
}
