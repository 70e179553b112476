/**
 * The builder's runs (they change no configuration, so they name no effect, and they work while
 * the workflow is disabled): a test run (stored like any run when it is whole; its frames node by
 * node when streamed), a partial run up to / from a node, a single node, and the manual run of a
 * manual_trigger workflow as saved. Each answers the execution record.
 */
import { badRequest } from '../../common/errors.js'
import type { WorkflowDefinition } from '../../common/types.js'
import type { ExecutionRecord } from '../store/executions.js'
import type { Store } from '../store/types.js'
import {
  checkRunTargets, defaultTriggerOutput, manualTriggerOutput, prepareRun, withTriggerPin
} from '../workflows/run-request.js'
import type { RunRequest, Runner } from '../workflows/runner.js'
import { MANUAL_TRACE } from '../workflows/spans.js'
import type { Caller, FrameSink } from './types.js'

export interface RunDeps { store: Store, runner: Pick<Runner, 'run'> }

/** A run's body (checked against runBodySchema / nodeTestBodySchema). */
export interface RunFields {
  workflow?: WorkflowDefinition
  input?: unknown
  start_node?: string
  destination_node?: string
  node_input?: unknown
  pinned_outputs?: Record<string, unknown>
}

async function testRun (deps: RunDeps, workflowId: string, body: RunFields): Promise<RunRequest> {
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
    // A test of the whole workflow is stored like any run (runtime_settings decide); a partial one never.
    persist: partial ? 'never' : 'settings',
    awaitPersist: true,
    trace: MANUAL_TRACE
  }
}

export async function testRunOp (deps: RunDeps, _caller: Caller, input: { workflowId: string, fields: RunFields }): Promise<ExecutionRecord> {
  const { record } = await deps.runner.run(await testRun(deps, input.workflowId, input.fields))
  return record
}

/** The test run with each runner event (node started / finished) as a frame; answers the record. */
export async function testRunStreamOp (deps: RunDeps, _caller: Caller, input: { workflowId: string, fields: RunFields, frames: FrameSink }): Promise<ExecutionRecord> {
  const req = await testRun(deps, input.workflowId, input.fields)
  const frames = input.frames
  const { record } = await deps.runner.run({ ...req, hooks: { onEvent: e => { frames(e.type, e) } } })
  return record
}

export async function partialRunOp (deps: RunDeps, _caller: Caller, input: { workflowId: string, fields: RunFields }): Promise<ExecutionRecord> {
  const body = input.fields
  const prep = await prepareRun(deps.store, input.workflowId, body, { partial: true })
  const trigger = body.input !== undefined ? body.input : defaultTriggerOutput(prep.definition)
  const pinned = withTriggerPin(prep.definition, body.pinned_outputs, trigger, body.start_node)
  checkRunTargets(prep.definition, { ...body, pinned_outputs: pinned })
  const { record } = await deps.runner.run({
    proxy: prep.proxy,
    definition: prep.definition,
    mode: 'partial',
    trigger_output: trigger,
    pinned_outputs: pinned,
    start_node: body.start_node,
    destination_node: body.destination_node,
    workflow_version: prep.version,
    persist: 'never',
    trace: MANUAL_TRACE
  })
  return record
}

export async function nodeTestOp (deps: RunDeps, _caller: Caller, input: { workflowId: string, nodeId: string, fields: RunFields }): Promise<ExecutionRecord> {
  const body = input.fields
  const prep = await prepareRun(deps.store, input.workflowId, body, { partial: true })
  const nodeId = input.nodeId
  const trigger = body.input !== undefined ? body.input : defaultTriggerOutput(prep.definition)
  let pinned: Record<string, unknown> = { ...(body.pinned_outputs ?? {}) }
  // node_input stands in for every upstream node that has no pinned output; else the trigger gives `input`.
  if (body.node_input !== undefined) {
    for (const e of prep.definition.edges) if (e.target === nodeId && !(e.source in pinned)) pinned[e.source] = body.node_input
  }
  pinned = withTriggerPin(prep.definition, pinned, trigger, nodeId) ?? pinned
  if (!prep.definition.nodes.some(n => n.id === nodeId)) throw badRequest(`'${nodeId}' is not a node of this workflow.`, [{ field: 'nodeId', message: 'is not a node of this workflow' }])
  checkRunTargets(prep.definition, { start_node: nodeId, pinned_outputs: pinned })
  const { record } = await deps.runner.run({
    proxy: prep.proxy,
    definition: prep.definition,
    mode: 'node',
    trigger_output: trigger,
    pinned_outputs: pinned,
    start_node: nodeId,
    destination_node: nodeId,
    workflow_version: prep.version,
    persist: 'never',
    trace: MANUAL_TRACE
  })
  return record
}

export async function manualRunOp (deps: RunDeps, _caller: Caller, input: { workflowId: string }): Promise<ExecutionRecord> {
  const prep = await prepareRun(deps.store, input.workflowId, {}, { partial: false })
  const trigger = prep.definition.nodes.find(n => n.type === 'manual_trigger')
  if (trigger === undefined) {
    throw badRequest('This workflow does not start with a manual_trigger; use POST /api/v1/workflows/:workflowId/test to run it from the builder.', [{ field: 'workflow', message: 'needs a manual_trigger' }])
  }
  const { record } = await deps.runner.run({
    proxy: prep.proxy, definition: prep.definition, mode: 'manual', trigger_output: manualTriggerOutput(),
    workflow_version: prep.version, persist: 'settings', awaitPersist: true, trace: MANUAL_TRACE
  })
  return record
}
