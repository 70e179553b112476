/**
 * The gateway's workflow entry, aware of trigger test-listen: a request to a
 * proxy with a waiting listen session is captured, streamed to the session and
 * run (mode test); every other request runs as usual.
 */
import { errorBody, serviceUnavailable, toAppError } from '../../common/errors.js'
import type { WorkflowResponse } from '../../workers/engine/types.js'
import { answerOf, type GatewayRoute, type Runner } from './runner.js'
import type { TriggerListens } from './trigger-listen.js'

export function gatewayWorkflows (runner: Runner, listens: TriggerListens) {
  return async (route: GatewayRoute, trigger: unknown): Promise<WorkflowResponse> => {
    const session = listens.take(route.proxy.id)
    if (session === undefined) {
      // The listen just ended and the route table is being restored: a disabled workflow must not run.
      if (listens.overlaid(route.proxy.id)) throw serviceUnavailable('This API is being reconfigured; retry shortly.', 1)
      return await runner.gateway(route, trigger)
    }
    const def = route.workflow!
    listens.emit(session.id, 'captured', { trigger_output: trigger, at: new Date().toISOString() })
    try {
      const { result, record } = await runner.run({
        proxy: route.proxy, definition: def, mode: 'test', trigger_output: trigger, saved: true, persist: 'settings',
        hooks: { onEvent: e => { listens.emit(session.id, e.type, e) } }
      })
      listens.emit(session.id, 'execution', record)
      listens.end(session.id, 'finished')
      return answerOf(result, def, record.id)
    } catch (err) {
      listens.emit(session.id, 'error', errorBody(toAppError(err)))
      listens.end(session.id, 'finished')
      throw err
    }
  }
}
