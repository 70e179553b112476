/**
 * Building blocks of node descriptions: settings schema fragments (a value may be
 * one `{{ }}` expression where the fragment allows it) and the two description shapes,
 * entry triggers and the other nodes. Pure data.
 */
import type { NodeDescription } from './node-type.js'

/** A setting whose whole value is one `{{ }}` expression. */
export const expr = { type: 'string', pattern: '^\\s*\\{\\{[\\s\\S]*\\}\\}\\s*$', description: 'a {{ }} expression' }
// Form inputs often send numbers as text: digits are accepted (the engine converts them).
export const int = (minimum: number, maximum: number) => ({ anyOf: [{ type: 'integer', minimum, maximum }, expr, { type: 'string', pattern: '^\\s*\\d{1,10}\\s*$' }], description: `an integer from ${minimum} to ${maximum}, or a {{ }} expression` })
export const bool = { anyOf: [{ type: 'boolean' }, expr], description: 'true, false, or a {{ }} expression' }
export const text = (description: string) => ({ type: 'string', description })
export const required = (description: string) => ({ type: 'string', minLength: 1, description })
export const object = (description: string) => ({ anyOf: [{ type: 'object' }, expr], description })
export const anyValue = (description: string) => ({ description })

const schema = (properties: Record<string, unknown>, req: string[] = [], open = false) =>
  ({ type: 'object', additionalProperties: open, required: req, properties })

export const trigger = (type: string, description: string, settings: Record<string, unknown>, req: string[], outputs: string): NodeDescription => ({
  type,
  category: 'trigger',
  description,
  // A trigger without settings of its own tolerates editor metadata; the others are checked strictly.
  settings_schema: schema(settings, req, Object.keys(settings).length === 0),
  outputs,
  entry_trigger: true,
  terminal_node: false,
  requires_source_handle: false,
  supported_source_handles: [],
  default_source_handle: null,
  dynamic_source_handles: false,
  wiring_hint: 'The entry of the workflow: exactly one trigger per workflow; it has no incoming edges. Connect its output to the first node.'
})

export const plain = (type: string, category: NodeDescription['category'], description: string, settings: Record<string, unknown>, req: string[], outputs: string, hint: string): NodeDescription => ({
  type,
  category,
  description,
  settings_schema: schema(settings, req, Object.keys(settings).length === 0),
  outputs,
  entry_trigger: false,
  terminal_node: false,
  requires_source_handle: false,
  supported_source_handles: [],
  default_source_handle: null,
  dynamic_source_handles: false,
  wiring_hint: hint
})

/** An entry trigger's run: its output is the run's trigger output (the engine passes it as the input). */
export const passTrigger = async (ctx: { input: unknown }): Promise<{ output: unknown }> => ({ output: ctx.input })
