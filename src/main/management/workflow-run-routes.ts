/**
 * The builder's run routes (editor or admin; they emit no events and work while
 * the workflow is disabled):
 *   POST /workflows/:workflowId/test            run, answer the execution record
 *   POST /workflows/:workflowId/test/stream     the same as Server-Sent Events, node by node
 *   POST /workflows/:workflowId/execute-partial run up to / from a node; never stored
 *   POST /workflows/:workflowId/nodes/:nodeId/test  one node; never stored
 *   POST /workflows/:workflowId/manual-run      a manual_trigger workflow, as saved
 */
import type { ServerResponse } from 'node:http'
import { badRequest } from '../../common/errors.js'
import type { Store } from '../store/types.js'
import type { RunRequest, Runner } from '../workflows/runner.js'
import { MANUAL_TRACE } from '../workflows/spans.js'
import type { CaptureTrigger } from '../triggers/test-capture.js'
import type { Logger } from '../logger.js'
import type { TriggerListens } from '../workflows/trigger-listen.js'
import type { Router } from './router.js'
import { registerWorkflowListenRoutes } from './workflow-listen-routes.js'
import { workflowExecutionRoutes } from './workflow-execution-routes.js'
import { mountOperations } from './operation-routes.js'
import {
  checkRunTargets, defaultTriggerOutput, manualTriggerOutput, nodeTestBodySchema, prepareRun, runBodySchema, withTriggerPin
} from '../workflows/run-request.js'

export interface WorkflowRunDeps { store: Store, runner: Runner, listens: TriggerListens, capture?: CaptureTrigger, logger?: Logger }

// Runs change nothing: the audit trail does not record them as changes.
const BUILDER = { role: 'editor' as const, audit: false as const }

export function registerWorkflowRunRoutes (router: Router, deps: WorkflowRunDeps): void {
  mountOperations(router, deps, workflowExecutionRoutes)
  registerWorkflowListenRoutes(router, deps)

  const testRun = async (workflowId: string, body: any): Promise<RunRequest> => {
    const partial = body.start_node !== undefined || body.destination_node !== undefined
    const prep = await prepareRun(deps.store, workflowId, body, { partial })
    const input = body.input !== undefined ? body.input : defaultTriggerOutput(prep.definition)
    const pinned = withTriggerPin(prep.definition, body.pinned_outputs, input, body.start_node)
    checkRunTargets(prep.definition, { ...body, pinned_outputs: pinned })
    return {
      proxy: prep.proxy,
      definition: prep.definition,
      mode: 'test',
      trigger_output: input,
      pinned_outputs: pinned,
      start_node: body.start_node,
      destination_node: body.destination_node,
      workflow_version: prep.version,
      saved: prep.saved,
      // A test of the whole workflow is stored like any run (runtime_settings decide); a partial one never.
      persist: partial ? 'never' : 'settings',
      awaitPersist: true,
      trace: MANUAL_TRACE
    }
  }

  router.add('POST', '/api/v1/workflows/:workflowId/test', async ctx => {
    const { record } = await deps.runner.run(await testRun(ctx.params.workflowId, ctx.body ?? {}))
    return { status: 200, body: record }
  }, { ...BUILDER, body: runBodySchema })

  router.add('POST', '/api/v1/workflows/:workflowId/test/stream', async ctx => {
    const req = await testRun(ctx.params.workflowId, ctx.body ?? {})
    if (ctx.frames !== undefined) {
      // A surface with its own stream (MCP progress): frames go there, the record is the answer.
      const frames = ctx.frames
      const { record } = await deps.runner.run({ ...req, hooks: { onEvent: e => { frames(e.type, e) } } })
      return { status: 200, body: record }
    }
    const res = ctx.res
    // The head goes out with the first event, so a refused run (a full mailbox) is still a plain error answer.
    const send = (event: string, data: unknown) => {
      if (res.destroyed) return
      if (!res.headersSent) openStream(res)
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    }
    const { record } = await deps.runner.run({ ...req, hooks: { onEvent: e => { send(e.type, e) } } })
    send('execution', record)
    res.end()
    return undefined
  }, { ...BUILDER, body: runBodySchema })

  router.add('POST', '/api/v1/workflows/:workflowId/execute-partial', async ctx => {
    const body = ctx.body ?? {}
    const prep = await prepareRun(deps.store, ctx.params.workflowId, body, { partial: true })
    const input = body.input !== undefined ? body.input : defaultTriggerOutput(prep.definition)
    const pinned = withTriggerPin(prep.definition, body.pinned_outputs, input, body.start_node)
    checkRunTargets(prep.definition, { ...body, pinned_outputs: pinned })
    const { record } = await deps.runner.run({
      proxy: prep.proxy,
      definition: prep.definition,
      mode: 'partial',
      trigger_output: input,
      pinned_outputs: pinned,
      start_node: body.start_node,
      destination_node: body.destination_node,
      workflow_version: prep.version,
      persist: 'never',
      trace: MANUAL_TRACE
    })
    return { status: 200, body: record }
  }, { ...BUILDER, body: runBodySchema })

  router.add('POST', '/api/v1/workflows/:workflowId/nodes/:nodeId/test', async ctx => {
    const body = ctx.body ?? {}
    const prep = await prepareRun(deps.store, ctx.params.workflowId, body, { partial: true })
    const nodeId = ctx.params.nodeId
    const input = body.input !== undefined ? body.input : defaultTriggerOutput(prep.definition)
    let pinned: Record<string, unknown> = { ...(body.pinned_outputs ?? {}) }
    // node_input stands in for every upstream node that has no pinned output; else the trigger gives `input`.
    if (body.node_input !== undefined) {
      for (const e of prep.definition.edges) if (e.target === nodeId && !(e.source in pinned)) pinned[e.source] = body.node_input
    }
    pinned = withTriggerPin(prep.definition, pinned, input, nodeId) ?? pinned
    if (!prep.definition.nodes.some(n => n.id === nodeId)) throw badRequest(`'${nodeId}' is not a node of this workflow.`, [{ field: 'nodeId', message: 'is not a node of this workflow' }])
    checkRunTargets(prep.definition, { start_node: nodeId, pinned_outputs: pinned })
    const { record } = await deps.runner.run({
      proxy: prep.proxy,
      definition: prep.definition,
      mode: 'node',
      trigger_output: input,
      pinned_outputs: pinned,
      start_node: nodeId,
      destination_node: nodeId,
      workflow_version: prep.version,
      persist: 'never',
      trace: MANUAL_TRACE
    })
    return { status: 200, body: record }
  }, { ...BUILDER, body: nodeTestBodySchema })

  router.add('POST', '/api/v1/workflows/:workflowId/manual-run', async ctx => {
    const prep = await prepareRun(deps.store, ctx.params.workflowId, {}, { partial: false })
    const trigger = prep.definition.nodes.find(n => n.type === 'manual_trigger')
    if (trigger === undefined) {
      throw badRequest('This workflow does not start with a manual_trigger; use POST /api/v1/workflows/:workflowId/test to run it from the builder.', [{ field: 'workflow', message: 'needs a manual_trigger' }])
    }
    const { record } = await deps.runner.run({
      proxy: prep.proxy, definition: prep.definition, mode: 'manual', trigger_output: manualTriggerOutput(),
      workflow_version: prep.version, saved: true, persist: 'settings', awaitPersist: true, trace: MANUAL_TRACE
    })
    return { status: 200, body: record }
  }, { role: 'editor', body: { type: 'object', additionalProperties: false, properties: {} } })
}

function openStream (res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
}
