/**
 * Trigger test-listen (one start/stream pair for every kind), even while the
 * workflow is disabled: http_trigger captures the next request to the proxy's
 * gateway path; cron fires once at once; IMAP waits read-only for the first
 * unseen email; a broker listen connects first (an unreachable broker is the
 * answer, 502) and takes the next message. The captured output and its run
 * (mode test) are streamed.
 *   POST   /workflows/:workflowId/trigger-test/listen            start (answers the session)
 *   GET    /workflows/:workflowId/trigger-test/:listenId/stream  Server-Sent Events
 *   DELETE /workflows/:workflowId/trigger-test/:listenId         stop waiting
 */
import { AppError, badGateway, badRequest, conflict, errorBody, notFound } from '../../common/errors.js'
import type { Logger } from '../logger.js'
import { ENTRY_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import { getCollection } from '../store/collections.js'
import type { Store } from '../store/types.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import type { CaptureTrigger } from '../triggers/test-capture.js'
import { runListened } from '../workflows/listen-gateway.js'
import type { Runner } from '../workflows/runner.js'
import type { TriggerListens } from '../workflows/trigger-listen.js'
import type { Router } from './router.js'
import { checkDefinition, invalidDefinition } from '../workflows/definition.js'

const DEFAULT_TIMEOUT_S = 120
const BUILDER = { role: 'editor' as const, audit: false as const }

/**
 * A capture that failed, as the answer or stream frame a UI shows: errors that name their cause
 * (the broker, the mailbox) as they are, anything else as a 502 with its message; logged either way.
 */
function captureFailure (err: unknown, workflowId: string, triggerType: string, logger: Logger | undefined): AppError {
  const e = err instanceof AppError ? err : badGateway(`The ${triggerType} listen failed: ${(err as Error)?.message ?? String(err)}`)
  logger?.warn({ workflow_id: workflowId, trigger_type: triggerType, code: e.code, err: e.message }, 'trigger test-listen failed')
  return e
}

export function registerWorkflowListenRoutes (router: Router, deps: { store: Store, listens: TriggerListens, runner: Pick<Runner, 'run'>, capture?: CaptureTrigger, logger?: Logger }): void {
  router.add('POST', '/api/v1/workflows/:workflowId/trigger-test/listen', async ctx => {
    const proxy = await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    const def = proxy.workflow
    if (def === null) throw badRequest('This workflow has no saved definition yet; save one before listening for its trigger.')
    const problems = checkDefinition(def, { enabled: true })
    if (problems.length > 0) throw invalidDefinition(problems)
    const trigger = def.nodes.find(n => ENTRY_TRIGGER_TYPES.includes(n.type))!
    const seconds: number = ctx.body?.timeout_seconds ?? DEFAULT_TIMEOUT_S
    const stream = (id: string) => `/api/v1/workflows/${proxy.workflow_id}/trigger-test/${id}/stream`
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
      return { status: 200, body: { ...session, stream: stream(session.id) } }
    }
    const collection = await getCollection(deps.store, proxy.collection_id)
    if (proxy.status !== 'published' || collection.status !== 'active') {
      throw conflict(`Proxy '${proxy.name}' is not served at the gateway (${proxy.status !== 'published' ? 'it is a draft' : `collection '${collection.name}' is disabled`}); publish it to capture a request.`)
    }
    const path = (collection.base_path === '/' ? '' : collection.base_path) + proxy.path
    const session = deps.listens.start(proxy, trigger.type, path, seconds * 1000)
    return { status: 200, body: { ...session, stream: stream(session.id) } }
  }, { ...BUILDER, body: { type: 'object', additionalProperties: false, properties: { timeout_seconds: { type: 'integer', minimum: 1, maximum: 600 } } } })

  router.add('GET', '/api/v1/workflows/:workflowId/trigger-test/:listenId/stream', async ctx => {
    if (deps.listens.get(ctx.params.workflowId, ctx.params.listenId) === undefined) throw notFound(`Listen session '${ctx.params.listenId}' does not exist (or ended more than a minute ago).`)
    const res = ctx.res
    if (ctx.frames !== undefined) {
      // A surface with its own stream (MCP progress): each frame goes there; the answer is every frame.
      const frames = ctx.frames
      const seen: Array<{ event: string, data: unknown }> = []
      await new Promise<void>(resolve => {
        const stop = deps.listens.subscribe(ctx.params.listenId, f => {
          if (f === null) { resolve(); return }
          seen.push(f)
          frames(f.event, f.data)
        })
        res.on('close', () => { stop(); resolve() })
      })
      return { status: 200, body: { listen_id: ctx.params.listenId, frames: seen } }
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
    await new Promise<void>(resolve => {
      const stop = deps.listens.subscribe(ctx.params.listenId, f => {
        if (f === null) { res.end(); resolve(); return }
        if (!res.destroyed) res.write(`event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`)
      })
      res.on('close', () => { stop(); resolve() })
    })
    return undefined
  }, { role: 'editor' })

  router.add('DELETE', '/api/v1/workflows/:workflowId/trigger-test/:listenId', async ctx => {
    const s = deps.listens.get(ctx.params.workflowId, ctx.params.listenId)
    if (s === undefined) throw notFound(`Listen session '${ctx.params.listenId}' does not exist.`)
    if (s.status === 'waiting') {
      deps.listens.emit(s.id, 'cancelled', { message: 'The listen was stopped.' })
      deps.listens.end(s.id, 'cancelled')
    }
    return { status: 204 }
  }, BUILDER)
}
