/**
 * The gateway's workflow entry, aware of trigger test-listen: a request to a
 * proxy with a waiting listen session is captured, streamed to the session and
 * run (mode test); every other request runs as usual.
 */
import { errorBody, serviceUnavailable, toAppError } from '../../common/errors.js'
import type { WorkflowDefinition } from '../../common/types.js'
import type { TraceContext } from '../../common/trace-context.js'
import type { ExecutionResult, WorkflowResponse } from '../../workers/engine/types.js'
import { answerOf, type GatewayRoute, type RunRequest, type Runner } from './runner.js'
import type { ExecutionRecord } from '../store/executions.js'
import type { TriggerListens } from './trigger-listen.js'

export function gatewayWorkflows (runner: Runner, listens: TriggerListens) {
  return async (route: GatewayRoute, trigger: unknown, trace: TraceContext | null = null): Promise<WorkflowResponse> => {
    const session = listens.take(route.proxy.id)
    if (session === undefined) {
      // Matched while a listen waited, which ended meanwhile: a disabled workflow must not run.
      if (listens.overlaid(route.proxy)) throw serviceUnavailable('This API is being reconfigured; retry shortly.', 1)
      return await runner.gateway(route, trigger, trace)
    }
    const { result, record } = await runListened(runner, listens, session.id, route.proxy, route.workflow!, trigger)
    return answerOf(result, route.workflow!, record.id)
  }
}

/**
 * Runs a listen session's captured trigger output (mode test) and streams it:
 * `captured`, each node's progress, `execution` (or `error`), then the session ends.
 */
export async function runListened (runner: Pick<Runner, 'run'>, listens: TriggerListens, sessionId: string, proxy: RunRequest['proxy'], def: WorkflowDefinition, trigger: unknown): Promise<{ result: ExecutionResult, record: ExecutionRecord }> {
  listens.emit(sessionId, 'captured', { trigger_output: trigger, at: new Date().toISOString() })
  try {
    const { result, record } = await runner.run({
      proxy, definition: def, mode: 'test', trigger_output: trigger, persist: 'settings',
      // A trigger output's run_id (cron, IMAP) names its execution.
      ...(typeof (trigger as { run_id?: unknown } | null)?.run_id === 'string' ? { execution_id: (trigger as { run_id: string }).run_id } : {}),
      hooks: { onEvent: e => { listens.emit(sessionId, e.type, e) } }
    })
    listens.emit(sessionId, 'execution', record)
    listens.end(sessionId, 'finished')
    return { result, record }
  } catch (err) {
    listens.emit(sessionId, 'error', errorBody(toAppError(err)))
    listens.end(sessionId, 'finished')
    throw err
  }
}
