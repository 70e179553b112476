/** Execution records of a workflow: list (newest first, by status or mode), read one, replay one. */
import { badRequest, validationFailed } from '../../common/errors.js'
import { getExecution, listExecutions, type ExecutionStatus } from '../store/executions.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import type { Router } from './router.js'
import { pageQuery } from './validation.js'
import type { WorkflowRunDeps } from './workflow-run-routes.js'
import { prepareRun } from '../workflows/run-request.js'
import { MANUAL_TRACE } from '../workflows/spans.js'

const STATUSES = ['success', 'error', 'timeout']
const MODES = ['gateway', 'test', 'manual', 'replay', 'trigger']

export function registerWorkflowExecutionRoutes (router: Router, deps: WorkflowRunDeps): void {
  router.add('GET', '/api/v1/workflows/:workflowId/executions', async ctx => {
    const pq = pageQuery(ctx.query, { filters: ['status', 'mode'] })
    const status = ctx.query.get('status') ?? undefined
    const mode = ctx.query.get('mode') ?? undefined
    if (status !== undefined && !STATUSES.includes(status)) throw validationFailed(`status must be one of ${STATUSES.join(', ')}.`, [{ field: 'status', message: `must be one of ${STATUSES.join(', ')}` }])
    if (mode !== undefined && !MODES.includes(mode)) throw validationFailed(`mode must be one of ${MODES.join(', ')}.`, [{ field: 'mode', message: `must be one of ${MODES.join(', ')}` }])
    await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    return { status: 200, body: await listExecutions(deps.store, ctx.params.workflowId, { status: status as ExecutionStatus | undefined, mode }, pq) }
  }, { role: 'viewer' })

  router.add('GET', '/api/v1/workflows/:workflowId/executions/:executionId', async ctx => {
    await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    return { status: 200, body: await getExecution(deps.store, ctx.params.workflowId, ctx.params.executionId) }
  }, { role: 'viewer' })

  // Runs the current saved definition again with the stored trigger output; answers the new record.
  router.add('POST', '/api/v1/workflows/:workflowId/executions/:executionId/replay', async ctx => {
    const prep = await prepareRun(deps.store, ctx.params.workflowId, {}, { partial: false })
    const old = await getExecution(deps.store, ctx.params.workflowId, ctx.params.executionId)
    const t = old.trigger_output as { truncated?: boolean } | null
    if (t !== null && typeof t === 'object' && t.truncated === true) {
      throw badRequest('This execution\'s trigger output was too large to keep, so it cannot be replayed.')
    }
    const { record } = await deps.runner.run({
      proxy: prep.proxy, definition: prep.definition, mode: 'replay', trigger_output: old.trigger_output,
      workflow_version: prep.version, replay_of: old.id, saved: true, persist: 'settings', awaitPersist: true, trace: MANUAL_TRACE
    })
    return { status: 200, body: record }
  }, { role: 'editor', body: { type: 'object', additionalProperties: false, properties: {} } })
}
