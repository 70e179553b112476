/**
 * The body of the builder's run routes (CONVENTIONS.md):
 *   {"workflow": <definition, default the saved one>, "input": <trigger output>,
 *    "destination_node", "start_node", "pinned_outputs": {<node_id>: <output>}}
 * checked against the definition it runs, so a UI gets a 400 naming what is wrong.
 */
import { badRequest, validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { Proxy, WorkflowDefinition } from '../../common/types.js'
import { ENTRY_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import { manualTriggerOutput } from '../../workers/nodes/manual-trigger.js'
import { nodeType } from '../../workers/nodes/registry.js'
import type { Queryable } from '../store/types.js'
import { getProxyByWorkflowId } from '../store/workflows.js'
import { currentVersion } from '../store/workflow-versions.js'
import { checkDefinition, invalidDefinition } from './definition.js'

export const runBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    workflow: { type: 'object' },
    input: {},
    destination_node: { type: 'string', minLength: 1 },
    start_node: { type: 'string', minLength: 1 },
    pinned_outputs: { type: 'object' }
  }
}

/** The single-node test: the node's input stands in for its upstream nodes' outputs. */
export const nodeTestBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    workflow: { type: 'object' },
    input: {},
    node_input: {},
    pinned_outputs: { type: 'object' }
  }
}

export interface PreparedRun {
  proxy: Proxy
  definition: WorkflowDefinition
  /** The saved definition runs (not a posted, different one). */
  saved: boolean
  /** Its saved version number, when `saved`. */
  version: number | null
}

/** Loads the workflow, picks the posted or saved definition and checks it. */
export async function prepareRun (q: Queryable, workflowId: string, body: { workflow?: WorkflowDefinition }, opts: { partial: boolean }): Promise<PreparedRun> {
  const proxy = await getProxyByWorkflowId(q, workflowId)
  const posted = body.workflow
  const definition = posted ?? proxy.workflow
  if (definition === null || definition === undefined) {
    throw badRequest('This workflow has no saved definition yet; save one or send it as "workflow".', [{ field: 'workflow', message: 'is required while nothing is saved' }])
  }
  const problems = checkDefinition(definition, { enabled: true, partial: opts.partial })
  if (problems.length > 0) throw invalidDefinition(problems)
  const saved = posted === undefined || JSON.stringify(posted) === JSON.stringify(proxy.workflow)
  const version = saved ? (await currentVersion(q, workflowId))?.number ?? null : null
  return { proxy, definition, saved, version }
}

/** start_node, destination_node and pinned node ids must name nodes; a start node's upstream must be pinned. */
export function checkRunTargets (def: WorkflowDefinition, body: { start_node?: string, destination_node?: string, pinned_outputs?: Record<string, unknown> }): void {
  const ids = new Set(def.nodes.map(n => n.id))
  const details: ErrorDetail[] = []
  for (const f of ['start_node', 'destination_node'] as const) {
    const id = body[f]
    if (id !== undefined && !ids.has(id)) details.push({ field: f, message: `'${id}' is not a node of this workflow` })
  }
  for (const id of Object.keys(body.pinned_outputs ?? {})) {
    if (!ids.has(id)) details.push({ field: `pinned_outputs.${id}`, message: `'${id}' is not a node of this workflow` })
  }
  if (body.start_node !== undefined && ids.has(body.start_node)) {
    const pinned = body.pinned_outputs ?? {}
    const missing = def.edges.filter(e => e.target === body.start_node && !Object.prototype.hasOwnProperty.call(pinned, e.source)).map(e => e.source)
    for (const id of new Set(missing)) {
      details.push({ field: `pinned_outputs.${id}`, message: `is required: '${id}' feeds the start node '${body.start_node}'; pin its output` })
    }
  }
  if (details.length > 0) throw validationFailed(`The run request is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
}

/** The trigger output a test run gets when the request sends no `input`. */
export function defaultTriggerOutput (def: WorkflowDefinition): unknown {
  const trigger = def.nodes.find(n => ENTRY_TRIGGER_TYPES.includes(n.type))
  const sample = trigger === undefined ? undefined : nodeType(trigger.type)?.sampleOutput
  return sample !== undefined ? sample() : {}
}

export { manualTriggerOutput }

/**
 * A run that starts at a node fed by the trigger: the trigger's output is the
 * run's input, so the trigger counts as pinned with it (unless pinned already).
 */
export function withTriggerPin (def: WorkflowDefinition, pinned: Record<string, unknown> | undefined, triggerOutput: unknown, startNode: string | undefined): Record<string, unknown> | undefined {
  if (startNode === undefined) return pinned
  const trigger = def.nodes.find(n => ENTRY_TRIGGER_TYPES.includes(n.type))
  if (trigger === undefined || trigger.id === startNode || (pinned !== undefined && Object.prototype.hasOwnProperty.call(pinned, trigger.id))) return pinned
  if (!def.edges.some(e => e.source === trigger.id && e.target === startNode)) return pinned
  return { ...pinned, [trigger.id]: triggerOutput }
}
