/**
 * Checks of a workflow definition (CONVENTIONS.md layout), used by saves, the
 * validate route, imports and the builder's runs. Two levels:
 *   structural (every save): shape, known node types, unique ids and names,
 *     edges between existing nodes, at most one trigger;
 *   full (enabled saves, validation, runs): exactly one trigger, settings valid
 *     for each node type (the node catalogue's schemas and the type's own checks,
 *     src/workers/nodes/), expressions parse, edge
 *     handles valid for the source type, every node reachable from the trigger,
 *     cycles only through a loop node.
 * Problems are {node_id, field, message}; a UI shows the message as is.
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { WorkflowDefinition, WorkflowNode } from '../../common/types.js'
import { validationFailed, type AppError, type ErrorDetail } from '../../common/errors.js'
import { compileTemplate, ExpressionError } from '../../common/expressions/template.js'
import { ENTRY_TRIGGER_TYPES, NODE_CATALOGUE, NODE_TYPE_NAMES, WORKFLOW_DEFINITION_SCHEMA } from '../../common/workflow-catalogue.js'
import { nodeType } from '../../workers/nodes/registry.js'
import { ajv, checkOnlyAjv, compileOnFirstUse } from '../validation/ajv.js'
import { checkCycles, checkEdges, checkReachable } from './graph.js'

export const ENTRY_TRIGGERS = ENTRY_TRIGGER_TYPES
/** "a, b, c or d": the entry triggers, as the missing-trigger problem names them. */
const TRIGGER_LIST = ENTRY_TRIGGERS.length > 1 ? `${ENTRY_TRIGGERS.slice(0, -1).join(', ')} or ${ENTRY_TRIGGERS[ENTRY_TRIGGERS.length - 1] ?? ''}` : ENTRY_TRIGGERS.join('')
export const NODE_TYPES = NODE_TYPE_NAMES

export interface WorkflowProblem { node_id: string | null, field: string | null, message: string }

/** The layout of a definition, shared with the collection file so that what a save accepts imports back. */
export const definitionSchema = WORKFLOW_DEFINITION_SCHEMA
const validateShape = compileOnFirstUse(ajv, definitionSchema)

// verbose: errors carry the schema (its `description` words the message) and the data.
const SETTINGS: ReadonlyMap<string, ValidateFunction> = new Map(NODE_CATALOGUE.map(d => [d.type, compileOnFirstUse(checkOnlyAjv, d.settings_schema)]))

export interface CheckOptions {
  /** Full rules (an enabled save, the validate route, a run); false: structural only. */
  enabled: boolean
  /** A partial or single-node run: no trigger needed, unreachable nodes allowed. */
  partial?: boolean
}

/** Problems of a definition; an empty list means it passes. */
export function checkDefinition (def: unknown, opts: CheckOptions): WorkflowProblem[] {
  if (!validateShape(def)) {
    return (validateShape.errors ?? []).map(e => ({ node_id: null, field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'workflow', message: `${e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'The workflow'} ${e.message ?? 'is invalid'}.` }))
  }
  const d = def as unknown as WorkflowDefinition
  const problems: WorkflowProblem[] = []
  const nodes = new Map<string, WorkflowNode>()
  const names = new Set<string>()
  for (const n of d.nodes) {
    if (nodes.has(n.id)) problems.push({ node_id: n.id, field: 'id', message: `Node id '${n.id}' is used twice.` })
    if (names.has(n.name)) problems.push({ node_id: n.id, field: 'name', message: `Node name '${n.name}' is used twice; names must be unique because expressions refer to them.` })
    nodes.set(n.id, n)
    names.add(n.name)
  }
  for (const e of d.edges) {
    if (!nodes.has(e.source)) problems.push({ node_id: null, field: 'edges', message: `An edge starts at '${e.source}', which is not a node of this workflow.` })
    if (!nodes.has(e.target)) problems.push({ node_id: null, field: 'edges', message: `An edge ends at '${e.target}', which is not a node of this workflow.` })
  }
  const triggers = d.nodes.filter(n => ENTRY_TRIGGERS.includes(n.type))
  if ((opts.enabled && opts.partial !== true) || triggers.length > 1) {
    if (triggers.length === 0) problems.push({ node_id: null, field: 'nodes', message: `The workflow needs exactly one entry trigger node (${TRIGGER_LIST}); it has none.` })
    const second = triggers[1]
    if (second !== undefined) {
      problems.push({ node_id: second.id, field: 'type', message: `The workflow needs exactly one entry trigger node; it has ${triggers.length} (${triggers.map(n => n.name).join(', ')}).` })
    }
  }
  if (!opts.enabled) return problems
  for (const n of d.nodes) problems.push(...checkSettings(n))
  problems.push(...checkEdges(d, nodes))
  for (const n of d.nodes) problems.push(...(nodeType(n.type)?.checkInDefinition?.(n, d) ?? []))
  if (triggers.length > 0 && opts.partial !== true) problems.push(...checkReachable(d, triggers))
  problems.push(...checkCycles(d, nodes))
  return problems
}

function checkSettings (n: WorkflowNode): WorkflowProblem[] {
  const settings = n.settings ?? {}
  const type = nodeType(n.type)
  const validate = SETTINGS.get(n.type)
  if (type === undefined || validate === undefined) return [] // reported by the structural checks
  const problems: WorkflowProblem[] = []
  const at = (field: string, message: string) => problems.push({ node_id: n.id, field, message: `Node '${n.name}' (${n.type}): ${field} ${message}.` })
  if (!validate(settings)) for (const e of collapse(validate.errors ?? [])) at(...settingsDetail(n, e))
  // Expressions parse (literal settings, such as the code node's code, are not expressions).
  const literal = new Set((type.literalSettings ?? []).map(k => `settings.${k}`))
  walkStrings(settings, 'settings', (text, field) => {
    if (literal.has(field)) return
    if (!text.includes('{{')) return
    try { compileTemplate(text) } catch (err) {
      if (!(err instanceof ExpressionError)) throw err
      at(field, `has an expression that does not parse: ${err.message}`)
    }
  })
  for (const [field, message] of type.checkSettings?.(settings) ?? []) at(field, message)
  return problems
}

/**
 * anyOf [literal, expression]: for a string the expression branch was meant, so
 * the schema's description words the message; otherwise the literal branch's own
 * errors are more precise.
 */
function collapse (errors: ErrorObject[]): ErrorObject[] {
  const drop = new Set<ErrorObject>()
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue
    const meant = typeof e.data === 'string' ? null : `${e.schemaPath}/0/`
    for (const x of errors) {
      if (x === e || !x.schemaPath.startsWith(`${e.schemaPath}/`)) continue
      if (meant === null || !x.schemaPath.startsWith(meant)) drop.add(x)
    }
    if (meant !== null && errors.some(x => x.schemaPath.startsWith(meant))) drop.add(e)
  }
  return errors.filter(e => !drop.has(e))
}

function settingsDetail (n: WorkflowNode, e: ErrorObject): [string, string] {
  const path = ['settings', ...e.instancePath.split('/').filter(Boolean)].join('.')
  if (e.keyword === 'required') return [`${path}.${(e.params as { missingProperty: string }).missingProperty}`, 'is required']
  if (e.keyword === 'additionalProperties') return [`${path}.${(e.params as { additionalProperty: string }).additionalProperty}`, `is not a setting of ${n.type}`]
  if (e.keyword === 'enum') return [path, `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map(v => JSON.stringify(v)).join(', ')}`]
  const described = (e.parentSchema as { description?: string } | undefined)?.description
  if (e.keyword === 'anyOf' && described !== undefined) return [path, `must be ${described}`]
  return [path, e.message ?? 'is invalid']
}

function walkStrings (value: unknown, path: string, fn: (text: string, path: string) => void): void {
  if (typeof value === 'string') fn(value, path)
  else if (Array.isArray(value)) value.forEach((v, i) => walkStrings(v, `${path}.${i}`, fn))
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walkStrings(v, `${path}.${k}`, fn)
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

/** The 400 a UI shows when a definition has problems: the message names them all, details list each. */
export const invalidDefinition = (problems: WorkflowProblem[]): AppError =>
  validationFailed(`The workflow is invalid: ${problems.map(p => p.message).join(' ')}`, problems as unknown as ErrorDetail[])
