/**
 * A node type's catalogue entry (GET /api/v1/workflows/nodes answers a list of them).
 * Types only, importing nothing: the console's builder reads this shape too.
 */
export interface NodeDescription {
  type: string
  category: 'trigger' | 'action' | 'flow' | 'data'
  description: string
  /** JSON Schema of `settings`; any value may instead be one `{{ }}` expression where `expression` is allowed. */
  settings_schema: Record<string, unknown>
  outputs: string
  entry_trigger: boolean
  /** It ends a path (nothing needs to follow it). */
  terminal_node: boolean
  requires_source_handle: boolean
  supported_source_handles: string[]
  default_source_handle: string | null
  /** Handles are not a fixed list (none of the current types; kept for the editor contract). */
  dynamic_source_handles: boolean
  wiring_hint: string
}
