/**
 * Structural checks of a workflow definition (CONVENTIONS.md layout), used when
 * a workflow is saved or validated: shape, known node types, unique ids and
 * names, edges between existing nodes, and exactly one entry trigger.
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { ajv } from './router.js'

export const ENTRY_TRIGGERS = ['http_trigger', 'manual_trigger', 'cron_trigger', 'broker_consumer', 'imap_trigger'] as const
export const NODE_TYPES = [...ENTRY_TRIGGERS, 'http_request_node', 'parallel_node', 'merge_node', 'set_node', 'condition_node',
  'delay_node', 'response_node', 'loop_node', 'xml_node', 'execute_subworkflow', 'code_node', 'cache_lookup_node'] as const

export interface WorkflowProblem { node_id: string | null, field: string | null, message: string }

export const definitionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['nodes', 'edges'],
  properties: {
    nodes: {
      type: 'array',
      maxItems: 500,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'type'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 100 },
          name: { type: 'string', minLength: 1, maxLength: 200 },
          type: { type: 'string', enum: NODE_TYPES },
          settings: { type: 'object', default: {} },
          position: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } } }
        }
      }
    },
    edges: {
      type: 'array',
      maxItems: 2000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['source', 'target'],
        properties: {
          id: { type: 'string', maxLength: 200 },
          source: { type: 'string', minLength: 1 },
          target: { type: 'string', minLength: 1 },
          sourceHandle: { type: ['string', 'null'] },
          targetHandle: { type: ['string', 'null'] }
        }
      }
    },
    runtime_settings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeout_ms: { type: 'integer', minimum: 1, maximum: 3_600_000 },
        save_on_success: { type: 'boolean' },
        save_on_error: { type: 'boolean' }
      }
    }
  }
}
const validateShape = ajv.compile(definitionSchema)

/** Problems of a definition; `enabled` adds the rules an enabled workflow must meet. */
export function checkDefinition (def: unknown, opts: { enabled: boolean }): WorkflowProblem[] {
  if (!validateShape(def)) {
    return (validateShape.errors ?? []).map(e => ({ node_id: null, field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'workflow', message: e.message ?? 'is invalid' }))
  }
  const d = def as unknown as WorkflowDefinition
  const problems: WorkflowProblem[] = []
  const ids = new Set<string>()
  const names = new Set<string>()
  for (const n of d.nodes) {
    if (ids.has(n.id)) problems.push({ node_id: n.id, field: 'id', message: `Node id '${n.id}' is used twice.` })
    if (names.has(n.name)) problems.push({ node_id: n.id, field: 'name', message: `Node name '${n.name}' is used twice; names must be unique because expressions refer to them.` })
    ids.add(n.id)
    names.add(n.name)
  }
  for (const e of d.edges) {
    if (!ids.has(e.source)) problems.push({ node_id: null, field: 'edges', message: `An edge starts at '${e.source}', which is not a node of this workflow.` })
    if (!ids.has(e.target)) problems.push({ node_id: null, field: 'edges', message: `An edge ends at '${e.target}', which is not a node of this workflow.` })
  }
  const triggers = d.nodes.filter(n => (ENTRY_TRIGGERS as readonly string[]).includes(n.type))
  if (opts.enabled || triggers.length > 1) {
    if (triggers.length === 0) problems.push({ node_id: null, field: 'nodes', message: 'The workflow needs exactly one entry trigger node (http_trigger, manual_trigger, cron_trigger, broker_consumer or imap_trigger); it has none.' })
    if (triggers.length > 1) {
      problems.push({ node_id: triggers[1].id, field: 'type', message: `The workflow needs exactly one entry trigger node; it has ${triggers.length} (${triggers.map(n => n.name).join(', ')}).` })
    }
  }
  return problems
}

/** The definition seeded when a workflow is enabled on a proxy that has none: HTTP trigger to a response. */
export function defaultDefinition (): WorkflowDefinition {
  return {
    nodes: [
      { id: 'trigger', name: 'trigger', type: 'http_trigger', settings: {}, position: { x: 0, y: 0 } },
      { id: 'response', name: 'response', type: 'response_node', settings: { status: 200, headers: { 'content-type': 'application/json' }, body: '{{ trigger.request.body }}' }, position: { x: 300, y: 0 } }
    ],
    edges: [{ id: 'trigger-response', source: 'trigger', target: 'response' }],
    runtime_settings: { timeout_ms: 30000, save_on_success: false, save_on_error: true }
  }
}
