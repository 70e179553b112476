/**
 * Workflow operations: a proxy's workflow (read, save, validate), its saved versions (list,
 * read, restore) and the node catalogue. Saves go through workflows/save.ts, the one write path,
 * which adds a version and hands back the proxy_workflow change for effects.changed.
 */
import { notFound, validationFailed } from '../../common/errors.js'
import { statusRules } from '../../common/status-handling.js'
import type { Page, WorkflowDefinition } from '../../common/types.js'
import { describeNode, NODE_CATALOGUE } from '../../common/workflow-catalogue.js'
import { nodeType } from '../../workers/nodes/registry.js'
import { getProxy } from '../store/proxies.js'
import type { PageQuery } from '../store/rows.js'
import { currentVersion, getWorkflowVersion, listWorkflowVersions, type WorkflowVersion } from '../store/workflow-versions.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import { checkDefinition } from '../workflows/definition.js'
import { referenceWarnings } from '../workflows/references.js'
import { saveWorkflow, workflowBody } from '../workflows/save.js'
import { visibleProxy } from './proxies.js'
import type { Caller, OperationDeps } from './types.js'

type Deps = Pick<OperationDeps, 'store' | 'effects'>
type WorkflowBody = ReturnType<typeof workflowBody>

/** What a save or validation reads: `workflow` (or its alias `definition`) and `enabled` (or `workflow_enabled`). */
export interface WorkflowFields {
  workflow?: WorkflowDefinition | null
  definition?: WorkflowDefinition | null
  enabled?: boolean
  workflow_enabled?: boolean
}

/** The sent definition without builder-only pins (top level of the body or inside the definition). */
function withoutPins<T> (def: T): T {
  if (def === null || typeof def !== 'object' || !('pinned_outputs' in def)) return def
  const { pinned_outputs: _pins, ...rest } = def as Record<string, unknown>
  return rest as T
}

/** `enabled`, or its alias `workflow_enabled`; both given and different is a clear 400. */
function enabledOf (body: WorkflowFields): boolean | undefined {
  if (body.enabled !== undefined && body.workflow_enabled !== undefined && body.enabled !== body.workflow_enabled) {
    throw validationFailed('enabled and workflow_enabled disagree; send one of them.', [{ field: 'enabled', message: 'disagrees with workflow_enabled' }])
  }
  return body.enabled ?? body.workflow_enabled
}

/** Saves a definition and/or the enabled flag, independently. */
export async function saveWorkflowOp (deps: Deps, caller: Caller, input: { id: string, ifMatch?: number, fields: WorkflowFields }): Promise<WorkflowBody & { warnings: unknown[] }> {
  const body = input.fields
  const sent: WorkflowDefinition | null | undefined = withoutPins(body.workflow !== undefined ? body.workflow : body.definition)
  const { proxy, version, change } = await saveWorkflow(deps.store, { proxyId: input.id, definition: sent, enabled: enabledOf(body), actorSub: caller.sub, ifMatch: input.ifMatch })
  deps.effects.changed(caller, change)
  // References that will resolve to nothing: the save stands, the answer says so.
  const warnings = proxy.workflow !== null ? referenceWarnings(proxy.workflow) : []
  return { ...workflowBody(proxy, version), warnings }
}

export async function getWorkflowOp (deps: Deps, caller: Caller, input: { id: string }): Promise<WorkflowBody> {
  const p = visibleProxy(await getProxy(deps.store, input.id), caller)
  return workflowBody(p, await currentVersion(deps.store, p.workflow_id))
}

/** Validation only: answers the problems a UI shows; saves nothing, emits nothing. */
export async function validateWorkflowOp (deps: Deps, _caller: Caller, input: { id: string, fields: WorkflowFields }): Promise<Record<string, unknown>> {
  const p = await getProxy(deps.store, input.id)
  const body = input.fields
  const definition = withoutPins(body.workflow ?? body.definition ?? p.workflow)
  if (definition === null) return { valid: false, errors: [{ node_id: null, field: 'workflow', message: 'The proxy has no workflow definition yet.' }] }
  const problems = checkDefinition(definition, { enabled: true })
  const warnings = problems.length === 0 ? referenceWarnings(definition) : []
  // What a non-2xx answer of each HTTP request node will do, said before any run.
  const rules = problems.length === 0 ? statusRules(definition, nodeType) : []
  return { valid: problems.length === 0, errors: problems, warnings, status_rules: rules }
}

export async function listWorkflowVersionsOp (deps: Deps, _caller: Caller, input: { workflowId: string, page: PageQuery }): Promise<Page<WorkflowVersion>> {
  await getProxyByWorkflowId(deps.store, input.workflowId)
  return await listWorkflowVersions(deps.store, input.workflowId, input.page)
}

export async function getWorkflowVersionOp (deps: Deps, _caller: Caller, input: { workflowId: string, versionId: string }): Promise<WorkflowVersion> {
  await getProxyByWorkflowId(deps.store, input.workflowId)
  return await getWorkflowVersion(deps.store, input.workflowId, input.versionId)
}

/** Restores the definition only: the enabled flag stays as it is (restoring never switches production on or off). */
export async function restoreWorkflowVersionOp (deps: Deps, caller: Caller, input: { workflowId: string, versionId: string, ifMatch?: number }): Promise<WorkflowBody & { restored_from: { id: string, number: number } }> {
  const proxy = await getProxyByWorkflowId(deps.store, input.workflowId)
  const from = await getWorkflowVersion(deps.store, input.workflowId, input.versionId)
  const { proxy: after, version, change } = await saveWorkflow(deps.store, { proxyId: proxy.id, definition: from.definition, actorSub: caller.sub, ifMatch: input.ifMatch, restoredFrom: from.id })
  deps.effects.changed(caller, change)
  return { ...workflowBody(after, version), restored_from: { id: from.id, number: from.number } }
}

export async function listNodeTypesOp (_deps: unknown, _caller: Caller, _input: Record<string, never>): Promise<{ items: typeof NODE_CATALOGUE, next_cursor: null }> {
  return { items: NODE_CATALOGUE, next_cursor: null }
}

export async function getNodeTypeOp (_deps: unknown, _caller: Caller, input: { type: string }): Promise<NonNullable<ReturnType<typeof describeNode>>> {
  const d = describeNode(input.type)
  if (d === undefined) throw notFound(`Node type '${input.type}' does not exist; GET /api/v1/workflows/nodes lists them.`)
  return d
}
