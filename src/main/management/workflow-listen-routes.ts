/**
 * Trigger test-listen (start/stream pair; http_trigger): capture the next request
 * to the proxy's gateway path, even while the workflow is disabled, and stream it
 * and its run.
 *   POST   /workflows/:workflowId/trigger-test/listen            start (answers the session)
 *   GET    /workflows/:workflowId/trigger-test/:listenId/stream  Server-Sent Events
 *   DELETE /workflows/:workflowId/trigger-test/:listenId         stop waiting
 */
import { badRequest, conflict, notFound } from '../../common/errors.js'
import { ENTRY_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import { getCollection } from '../store/collections.js'
import type { Store } from '../store/types.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import type { TriggerListens } from '../workflows/trigger-listen.js'
import type { Router } from './router.js'
import { checkDefinition, invalidDefinition } from '../workflows/definition.js'

const DEFAULT_TIMEOUT_S = 120
const BUILDER = { role: 'editor' as const, audit: false as const }

export function registerWorkflowListenRoutes (router: Router, deps: { store: Store, listens: TriggerListens }): void {
  router.add('POST', '/api/v1/workflows/:workflowId/trigger-test/listen', async ctx => {
    const proxy = await getProxyByWorkflowId(deps.store, ctx.params.workflowId)
    const def = proxy.workflow
    if (def === null) throw badRequest('This workflow has no saved definition yet; save one before listening for its trigger.')
    const problems = checkDefinition(def, { enabled: true })
    if (problems.length > 0) throw invalidDefinition(problems)
    const trigger = def.nodes.find(n => ENTRY_TRIGGER_TYPES.includes(n.type))!
    if (trigger.type !== 'http_trigger') {
      throw badRequest(`Test-listen is available for http_trigger workflows; this one starts with ${trigger.type}. Run POST /api/v1/workflows/${proxy.workflow_id}/test with an "input" instead.`)
    }
    const collection = await getCollection(deps.store, proxy.collection_id)
    if (proxy.status !== 'published' || collection.status !== 'active') {
      throw conflict(`Proxy '${proxy.name}' is not served at the gateway (${proxy.status !== 'published' ? 'it is a draft' : `collection '${collection.name}' is disabled`}); publish it to capture a request.`)
    }
    const path = (collection.base_path === '/' ? '' : collection.base_path) + proxy.path
    const seconds: number = ctx.body?.timeout_seconds ?? DEFAULT_TIMEOUT_S
    const session = deps.listens.start(proxy, trigger.type, path, seconds * 1000)
    return { status: 200, body: { ...session, stream: `/api/v1/workflows/${proxy.workflow_id}/trigger-test/${session.id}/stream` } }
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
