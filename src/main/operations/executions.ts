/**
 * Execution records of a workflow: list (newest first, by status or mode), read one, replay one.
 * A replay runs the current saved definition again with the stored trigger output and answers
 * the new record; it changes no configuration, so it names no effect.
 */
import { badRequest, validationFailed } from '../../common/errors.js'
import type { Page } from '../../common/types.js'
import { getExecution, listExecutions, type ExecutionRecord, type ExecutionStatus } from '../store/executions.js'
import type { PageQuery } from '../store/rows.js'
import type { Store } from '../store/types.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import { prepareRun } from '../workflows/run-request.js'
import type { Runner } from '../workflows/runner.js'
import { MANUAL_TRACE } from '../workflows/spans.js'
import type { Caller } from './types.js'

export interface ExecutionDeps { store: Store, runner: Pick<Runner, 'run'> }

const STATUSES = ['success', 'error', 'timeout']
const MODES = ['gateway', 'test', 'manual', 'replay', 'trigger']

export async function listExecutionsOp (deps: Pick<ExecutionDeps, 'store'>, _caller: Caller, input: { workflowId: string, page: PageQuery, status?: string, mode?: string }): Promise<Page<ExecutionRecord>> {
  const { status, mode } = input
  if (status !== undefined && !STATUSES.includes(status)) throw validationFailed(`status must be one of ${STATUSES.join(', ')}.`, [{ field: 'status', message: `must be one of ${STATUSES.join(', ')}` }])
  if (mode !== undefined && !MODES.includes(mode)) throw validationFailed(`mode must be one of ${MODES.join(', ')}.`, [{ field: 'mode', message: `must be one of ${MODES.join(', ')}` }])
  await getProxyByWorkflowId(deps.store, input.workflowId)
  return await listExecutions(deps.store, input.workflowId, { status: status as ExecutionStatus | undefined, mode }, input.page)
}

export async function getExecutionOp (deps: Pick<ExecutionDeps, 'store'>, _caller: Caller, input: { workflowId: string, executionId: string }): Promise<ExecutionRecord> {
  await getProxyByWorkflowId(deps.store, input.workflowId)
  return await getExecution(deps.store, input.workflowId, input.executionId)
}

export async function replayExecutionOp (deps: ExecutionDeps, _caller: Caller, input: { workflowId: string, executionId: string }): Promise<ExecutionRecord> {
  const prep = await prepareRun(deps.store, input.workflowId, {}, { partial: false })
  const old = await getExecution(deps.store, input.workflowId, input.executionId)
  const t = old.trigger_output as { truncated?: boolean } | null
  if (t !== null && typeof t === 'object' && t.truncated === true) {
    throw badRequest('This execution\'s trigger output was too large to keep, so it cannot be replayed.')
  }
  const { record } = await deps.runner.run({
    proxy: prep.proxy, definition: prep.definition, mode: 'replay', trigger_output: old.trigger_output,
    workflow_version: prep.version, replay_of: old.id, persist: 'settings', awaitPersist: true, trace: MANUAL_TRACE
  })
  return record
}
