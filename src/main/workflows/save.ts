/** Saving a proxy's workflow: the one write path of PUT /proxies/:id/workflow and version restores. */
import type { Proxy, WorkflowDefinition } from '../../common/types.js'
import { getProxy, patchProxy } from '../store/proxies.js'
import { insertWorkflowVersion, type WorkflowVersion } from '../store/workflow-versions.js'
import type { Store } from '../store/types.js'
import { checkDefinition, defaultDefinition, invalidDefinition } from './definition.js'

export interface SaveRequest {
  proxyId: string
  /** undefined: keep the saved definition. */
  definition?: WorkflowDefinition | null
  enabled?: boolean
  actorSub: string | null
  ifMatch?: number
  restoredFrom?: string
}

/**
 * Saves a definition and/or the enabled flag in one transaction that also adds a
 * version. An enabled workflow must pass every rule. Returns the proxy_workflow change for the
 * caller to announce (the operation's one effect).
 */
export async function saveWorkflow (store: Store, req: SaveRequest): Promise<{ proxy: Proxy, version: WorkflowVersion, change: WorkflowChange }> {
  const { before, after, version } = await store.tx(async q => {
    const current = await getProxy(q, req.proxyId)
    const enabled: boolean = req.enabled ?? current.workflow_enabled
    let definition = req.definition !== undefined ? req.definition : current.workflow
    // Enabling a proxy that has no definition seeds a valid default instead of failing.
    if (enabled && definition === null) definition = defaultDefinition()
    if (definition !== null) {
      const problems = checkDefinition(definition, { enabled })
      if (problems.length > 0) throw invalidDefinition(problems)
    }
    const { before, after } = await patchProxy(q, req.proxyId, { workflow: definition, workflow_enabled: enabled }, req.ifMatch)
    const version = await insertWorkflowVersion(q, {
      workflow_id: after.workflow_id, proxy_id: after.id, definition: after.workflow, enabled: after.workflow_enabled, actor_sub: req.actorSub, restored_from: req.restoredFrom
    })
    return { before, after, version }
  })
  const change: WorkflowChange = {
    resource_kind: 'proxy_workflow',
    proxy_id: after.id,
    definition_changed: JSON.stringify(before.workflow) !== JSON.stringify(after.workflow),
    enabled_changed: before.workflow_enabled !== after.workflow_enabled,
    workflow_enabled: after.workflow_enabled
  }
  return { proxy: after, version, change }
}

/** The change event of a save, without its actor. */
export interface WorkflowChange { resource_kind: 'proxy_workflow', proxy_id: string, definition_changed: boolean, enabled_changed: boolean, workflow_enabled: boolean }

/** The answer of the workflow routes; `version` is the proxy record's (ETag), `version_id`/`version_number` the saved workflow version's. */
export const workflowBody = (p: Proxy, v: { id: string, number: number } | null) => ({
  proxy_id: p.id, workflow_id: p.workflow_id, workflow_enabled: p.workflow_enabled, workflow: p.workflow,
  version: p.version, version_id: v?.id ?? null, version_number: v?.number ?? null
})
