/**
 * The node catalogue: one description per node type (settings as JSON Schema,
 * what the node outputs, and the hints an editor or an agent needs to wire edges),
 * read from the node modules (src/workers/nodes/registry.ts lists them; each
 * module's description is pure data, so the main thread loads no run code).
 * Validation, the `GET /api/v1/workflows/nodes` route and the management MCP all
 * read this table, so a node type is described once.
 */
import type { NodeDescription } from './node-description.js'
import { NODE_TYPES } from '../workers/nodes/registry.js'

export { sourceHandlesOf } from '../workers/nodes/registry.js'

export type { NodeDescription } from './node-description.js'

/** Entry kinds that start on their own (schedules, brokers, mailboxes): the production triggers. */
export const PRODUCTION_TRIGGER_TYPES: readonly string[] = NODE_TYPES.filter(t => t.startedBy === 'itself').map(t => t.description.type)

/** Entry kinds that gateway traffic never starts (manual runs come from the builder only). */
export const NON_GATEWAY_TRIGGER_TYPES: readonly string[] = NODE_TYPES.filter(t => t.startedBy !== undefined && t.startedBy !== 'gateway').map(t => t.description.type)

/** `runtime_settings` of a definition: the save route and the collection file share it, so an export imports back. */
export const RUNTIME_SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeout_ms: { type: 'integer', minimum: 1, maximum: 3_600_000 },
    save_on_success: { type: 'boolean' },
    save_on_error: { type: 'boolean' },
    /** Per-proxy mailbox: runs in flight at once, and runs waiting beyond those. */
    max_concurrency: { type: 'integer', minimum: 1, maximum: 1000 },
    max_queue: { type: 'integer', minimum: 0, maximum: 10_000 }
  }
}

export const NODE_CATALOGUE: readonly NodeDescription[] = NODE_TYPES.map(t => t.description)

const BY_TYPE = new Map(NODE_CATALOGUE.map(d => [d.type, d]))

export function describeNode (type: string): NodeDescription | undefined {
  return BY_TYPE.get(type)
}

export const NODE_TYPE_NAMES: readonly string[] = NODE_CATALOGUE.map(d => d.type)
export const ENTRY_TRIGGER_TYPES: readonly string[] = NODE_CATALOGUE.filter(d => d.entry_trigger).map(d => d.type)

/** The layout of a workflow definition (CONVENTIONS.md): saves, validation and the collection file all read it. */
export const WORKFLOW_DEFINITION_SCHEMA = {
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
          type: { type: 'string', enum: NODE_TYPE_NAMES },
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
    runtime_settings: RUNTIME_SETTINGS_SCHEMA
  }
}
