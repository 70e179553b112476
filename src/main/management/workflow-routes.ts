import { validationFailed } from '../../common/errors.js'
import type { WorkflowDefinition } from '../../common/types.js'
import { getProxy } from '../store/proxies.js'
import { currentVersion } from '../store/workflow-versions.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { checkDefinition } from '../workflows/definition.js'
import { referenceWarnings } from '../workflows/references.js'
import { statusRules } from '../../common/status-handling.js'
import { saveWorkflow, workflowBody } from '../workflows/save.js'
import { etag } from './validation.js'
import { visibleProxy } from './proxies-routes.js'
import { registerWorkflowCatalogueRoutes } from './workflow-catalogue-routes.js'
import { registerWorkflowVersionRoutes } from './workflow-version-routes.js'

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

/** The sent definition without builder-only pins (top level of the body or inside the definition). */
function withoutPins<T> (def: T): T {
  if (def === null || typeof def !== 'object' || !('pinned_outputs' in def)) return def
  const { pinned_outputs: _pins, ...rest } = def as Record<string, unknown>
  return rest as T
}

/** `enabled`, or its alias `workflow_enabled`; both given and different is a clear 400. */
function enabledOf (body: { enabled?: boolean, workflow_enabled?: boolean }): boolean | undefined {
  if (body.enabled !== undefined && body.workflow_enabled !== undefined && body.enabled !== body.workflow_enabled) {
    throw validationFailed('enabled and workflow_enabled disagree; send one of them.', [{ field: 'enabled', message: 'disagrees with workflow_enabled' }])
  }
  return body.enabled ?? body.workflow_enabled
}

/** PUT /proxies/:id/workflow saves a definition and/or the enabled flag, independently. */
export function registerWorkflowRoutes (router: Router, deps: ManagementDeps): void {
  registerWorkflowCatalogueRoutes(router)
  registerWorkflowVersionRoutes(router, deps)

  router.add('PUT', '/api/v1/proxies/:id/workflow', async ctx => {
    const body = ctx.body ?? {}
    const sent: WorkflowDefinition | null | undefined = withoutPins(body.workflow !== undefined ? body.workflow : body.definition)
    const { proxy, version } = await saveWorkflow(deps, { proxyId: ctx.params.id, definition: sent, enabled: enabledOf(body), actorSub: ctx.user?.sub ?? null, ifMatch: ctx.ifMatch })
    // References that will resolve to nothing: the save stands, the answer says so.
    const warnings = proxy.workflow !== null ? referenceWarnings(proxy.workflow) : []
    return { status: 200, body: { ...workflowBody(proxy, version), warnings }, headers: etag(proxy.version) }
  }, { role: 'editor', body: saveSchema, readOnly: WORKFLOW_READ_ONLY })

  router.add('GET', '/api/v1/proxies/:id/workflow', async ctx => {
    const p = visibleProxy(await getProxy(deps.store, ctx.params.id), ctx.user)
    return { status: 200, body: workflowBody(p, await currentVersion(deps.store, p.workflow_id)), headers: etag(p.version) }
  })

  // Validation only: answers the problems a UI shows; saves nothing, emits nothing.
  router.add('POST', '/api/v1/proxies/:id/workflow/validate', async ctx => {
    const p = await getProxy(deps.store, ctx.params.id)
    const body = ctx.body ?? {}
    const definition = withoutPins(body.workflow ?? body.definition ?? p.workflow)
    if (definition === null) return { status: 200, body: { valid: false, errors: [{ node_id: null, field: 'workflow', message: 'The proxy has no workflow definition yet.' }] } }
    const problems = checkDefinition(definition, { enabled: true })
    const warnings = problems.length === 0 ? referenceWarnings(definition as WorkflowDefinition) : []
    // What a non-2xx answer of each HTTP request node will do, said before any run.
    const rules = problems.length === 0 ? statusRules(definition as WorkflowDefinition) : []
    return { status: 200, body: { valid: problems.length === 0, errors: problems, warnings, status_rules: rules } }
  }, { role: 'editor', body: saveSchema, readOnly: WORKFLOW_READ_ONLY })
}
