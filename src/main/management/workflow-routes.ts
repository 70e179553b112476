import type { WorkflowDefinition } from '../../common/types.js'
import { getProxy, patchProxy } from '../store/proxies.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { checkDefinition, defaultDefinition, invalidDefinition } from './workflow-definition.js'
import { etag } from './validation.js'
import { registerWorkflowCatalogueRoutes } from './workflow-catalogue-routes.js'

const saveSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    workflow: { type: ['object', 'null'] },
    definition: { type: ['object', 'null'] },
    enabled: { type: 'boolean' }
  }
}


/** PUT /proxies/:id/workflow saves a definition and/or the enabled flag, independently. */
export function registerWorkflowRoutes (router: Router, deps: ManagementDeps): void {
  registerWorkflowCatalogueRoutes(router)
  router.add('PUT', '/api/v1/proxies/:id/workflow', async ctx => {
    const body = ctx.body ?? {}
    const sent: WorkflowDefinition | null | undefined = body.workflow !== undefined ? body.workflow : body.definition
    const result = await deps.store.tx(async q => {
      const current = await getProxy(q, ctx.params.id)
      const enabled: boolean = body.enabled ?? current.workflow_enabled
      let definition = sent !== undefined ? sent : current.workflow
      // Enabling a proxy that has no definition seeds a valid default instead of failing.
      if (enabled && definition === null) definition = defaultDefinition()
      if (definition !== null) {
        const problems = checkDefinition(definition, { enabled })
        if (problems.length > 0) throw invalidDefinition(problems)
      }
      const { after } = await patchProxy(q, ctx.params.id, { workflow: definition, workflow_enabled: enabled }, ctx.ifMatch)
      return { before: current, after }
    })
    const { before, after } = result
    deps.events.publish({
      resource_kind: 'proxy_workflow',
      proxy_id: after.id,
      definition_changed: JSON.stringify(before.workflow) !== JSON.stringify(after.workflow),
      enabled_changed: before.workflow_enabled !== after.workflow_enabled,
      workflow_enabled: after.workflow_enabled,
      actor_sub: ctx.user?.sub
    })
    deps.onConfigChange()
    return {
      status: 200,
      body: { proxy_id: after.id, workflow_id: after.workflow_id, workflow_enabled: after.workflow_enabled, workflow: after.workflow, version: after.version },
      headers: etag(after.version)
    }
  }, { role: 'editor', body: saveSchema })

  router.add('GET', '/api/v1/proxies/:id/workflow', async ctx => {
    const p = await getProxy(deps.store, ctx.params.id)
    return { status: 200, body: { proxy_id: p.id, workflow_id: p.workflow_id, workflow_enabled: p.workflow_enabled, workflow: p.workflow, version: p.version }, headers: etag(p.version) }
  })

  // Validation only: answers the problems a UI shows; saves nothing, emits nothing.
  router.add('POST', '/api/v1/proxies/:id/workflow/validate', async ctx => {
    const p = await getProxy(deps.store, ctx.params.id)
    const body = ctx.body ?? {}
    const definition = body.workflow ?? body.definition ?? p.workflow
    if (definition === null) return { status: 200, body: { valid: false, errors: [{ node_id: null, field: 'workflow', message: 'The proxy has no workflow definition yet.' }] } }
    const problems = checkDefinition(definition, { enabled: true })
    return { status: 200, body: { valid: problems.length === 0, errors: problems } }
  }, { role: 'editor', body: saveSchema })
}
