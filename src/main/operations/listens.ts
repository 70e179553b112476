/**
 * Trigger test-listen (one start/stream pair for every kind), even while the workflow is
 * disabled: http_trigger captures the next request to the proxy's gateway path; cron fires once
 * at once; IMAP waits read-only for the first unseen email; a broker listen connects first (an
 * unreachable broker is the answer, 502) and takes the next message. The captured output and
 * its run (mode test) are the session's frames. Nothing here changes configuration.
 */
import { AppError, badGateway, badRequest, conflict, errorBody, notFound } from '../../common/errors.js'
import { ENTRY_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import type { Logger } from '../logger.js'
import { getCollection } from '../store/collections.js'
import type { Store } from '../store/types.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import type { CaptureTrigger } from '../triggers/test-capture.js'
import { checkDefinition, invalidDefinition } from '../workflows/definition.js'
import { runListened } from '../workflows/listen-gateway.js'
import type { Runner } from '../workflows/runner.js'
import type { ListenFrame, ListenSession, TriggerListens } from '../workflows/trigger-listen.js'
import type { Caller, FrameSink } from './types.js'

export interface ListenDeps { store: Store, listens: TriggerListens, runner: Pick<Runner, 'run'>, capture?: CaptureTrigger, logger?: Logger }

const DEFAULT_TIMEOUT_S = 120

/**
 * A capture that failed, as the answer or stream frame a UI shows: errors that name their cause
 * (the broker, the mailbox) as they are, anything else as a 502 with its message; logged either way.
 */
function captureFailure (err: unknown, workflowId: string, triggerType: string, logger: Logger | undefined): AppError {
  const e = err instanceof AppError ? err : badGateway(`The ${triggerType} listen failed: ${(err as Error)?.message ?? String(err)}`)
  logger?.warn({ workflow_id: workflowId, trigger_type: triggerType, code: e.code, err: e.message }, 'trigger test-listen failed')
  return e
}

/** Starts a listen session; answers it with the path of its stream. */
export async function startListenOp (deps: ListenDeps, _caller: Caller, input: { workflowId: string, timeoutSeconds?: number }): Promise<ListenSession & { stream: string }> {
  const proxy = await getProxyByWorkflowId(deps.store, input.workflowId)
  const def = proxy.workflow
  if (def === null) throw badRequest('This workflow has no saved definition yet; save one before listening for its trigger.')
  const problems = checkDefinition(def, { enabled: true })
  if (problems.length > 0) throw invalidDefinition(problems)
  const trigger = def.nodes.find(n => ENTRY_TRIGGER_TYPES.includes(n.type))
  // A definition that passed the check has its entry trigger.
  if (trigger === undefined) throw invalidDefinition([{ node_id: null, field: 'nodes', message: 'has no entry trigger' }])
  const seconds = input.timeoutSeconds ?? DEFAULT_TIMEOUT_S
  const stream = (id: string): string => `/api/v1/workflows/${proxy.workflow_id}/trigger-test/${id}/stream`
  if (trigger.type !== 'http_trigger') {
    const capture = deps.capture
    if (capture === undefined || !['cron_trigger', 'imap_trigger', 'broker_consumer'].includes(trigger.type)) {
      throw badRequest(`Test-listen is available for http_trigger, cron_trigger, imap_trigger and broker_consumer workflows, not ${trigger.type}; run POST /api/v1/workflows/${proxy.workflow_id}/test with an "input" instead.`)
    }
    // Cron fires once at once; IMAP waits read-only for the first unseen email; a broker listen consumes
    // with a throwaway group from the latest offset. None needs the proxy published.
    const ac = new AbortController()
    let connected: () => void = () => {}
    const ready = new Promise<void>(resolve => { connected = resolve })
    const output = capture(trigger, ac.signal, connected)
    // A broker that cannot be reached is this answer (502 naming it), not a session that fails later.
    if (trigger.type === 'broker_consumer') {
      try { await Promise.race([ready, output]) } catch (err) { ac.abort(); throw captureFailure(err, proxy.workflow_id, trigger.type, deps.logger) }
    }
    const session = deps.listens.start(proxy, trigger.type, '', seconds * 1000)
    deps.listens.subscribe(session.id, f => { if (f === null) ac.abort() })
    output.then(async output => {
      if (deps.listens.take(proxy.id)?.id !== session.id) return
      await runListened(deps.runner, deps.listens, session.id, { id: proxy.id, workflow_id: proxy.workflow_id }, def, output).catch(() => {})
    }, (err: unknown) => {
      if (ac.signal.aborted) return
      deps.listens.emit(session.id, 'error', errorBody(captureFailure(err, proxy.workflow_id, trigger.type, deps.logger)))
      deps.listens.end(session.id, 'finished')
    })
    return { ...session, stream: stream(session.id) }
  }
  const collection = await getCollection(deps.store, proxy.collection_id)
  if (proxy.status !== 'published' || collection.status !== 'active') {
    throw conflict(`Proxy '${proxy.name}' is not served at the gateway (${proxy.status !== 'published' ? 'it is a draft' : `collection '${collection.name}' is disabled`}); publish it to capture a request.`)
  }
  const path = (collection.base_path === '/' ? '' : collection.base_path) + proxy.path
  const session = deps.listens.start(proxy, trigger.type, path, seconds * 1000)
  return { ...session, stream: stream(session.id) }
}

/**
 * Follows a session: its frames so far, then each new one, until it ends or the caller goes
 * away. Answers every frame (what a surface without its own stream shows).
 */
export async function listenStreamOp (deps: Pick<ListenDeps, 'listens'>, _caller: Caller, input: { workflowId: string, listenId: string, frames: FrameSink, closed: AbortSignal, accepted: () => void }): Promise<{ listen_id: string, frames: ListenFrame[] }> {
  if (deps.listens.get(input.workflowId, input.listenId) === undefined) throw notFound(`Listen session '${input.listenId}' does not exist (or ended more than a minute ago).`)
  input.accepted()
  const seen: ListenFrame[] = []
  await new Promise<void>(resolve => {
    const stop = deps.listens.subscribe(input.listenId, f => {
      if (f === null) { resolve(); return }
      seen.push(f)
      input.frames(f.event, f.data)
    })
    const gone = (): void => { stop(); resolve() }
    if (input.closed.aborted) gone()
    else input.closed.addEventListener('abort', gone, { once: true })
  })
  return { listen_id: input.listenId, frames: seen }
}

/** Stops a session that is still waiting (one that ended stays as it ended). */
export async function stopListenOp (deps: Pick<ListenDeps, 'listens'>, _caller: Caller, input: { workflowId: string, listenId: string }): Promise<void> {
  const s = deps.listens.get(input.workflowId, input.listenId)
  if (s === undefined) throw notFound(`Listen session '${input.listenId}' does not exist.`)
  if (s.status === 'waiting') {
    deps.listens.emit(s.id, 'cancelled', { message: 'The listen was stopped.' })
    deps.listens.end(s.id, 'cancelled')
  }
}
