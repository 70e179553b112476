/**
 * The node catalogue: one description per node type (settings as JSON Schema,
 * what the node outputs, and the hints an editor or an agent needs to wire edges).
 * Validation, the `GET /api/v1/workflows/nodes` route and the management MCP all
 * read this table, so a node type is described once. Pure data: both threads may
 * import it.
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

/** A setting whose whole value is one `{{ }}` expression. */
const expr = { type: 'string', pattern: '^\\s*\\{\\{[\\s\\S]*\\}\\}\\s*$', description: 'a {{ }} expression' }
// Form inputs often send numbers as text: digits are accepted (the engine converts them).
const int = (minimum: number, maximum: number) => ({ anyOf: [{ type: 'integer', minimum, maximum }, expr, { type: 'string', pattern: '^\\s*\\d{1,10}\\s*$' }], description: `an integer from ${minimum} to ${maximum}, or a {{ }} expression` })
const bool = { anyOf: [{ type: 'boolean' }, expr], description: 'true, false, or a {{ }} expression' }
const text = (description: string) => ({ type: 'string', description })
const required = (description: string) => ({ type: 'string', minLength: 1, description })
const object = (description: string) => ({ anyOf: [{ type: 'object' }, expr], description })
const anyValue = (description: string) => ({ description })

const schema = (properties: Record<string, unknown>, req: string[] = [], open = false) =>
  ({ type: 'object', additionalProperties: open, required: req, properties })

const CONDITION_OPERATORS = ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists', 'matches']

const trigger = (type: string, description: string, settings: Record<string, unknown>, req: string[], outputs: string): NodeDescription => ({
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

const plain = (type: string, category: NodeDescription['category'], description: string, settings: Record<string, unknown>, req: string[], outputs: string, hint: string): NodeDescription => ({
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

export const NODE_CATALOGUE: readonly NodeDescription[] = [
  trigger('http_trigger', 'Runs for every request that reaches the proxy at the gateway.', {}, [],
    '{request: {method, path, path_params, query, headers, body}}; {{trigger.params.<name>}} reads a path parameter.'),
  trigger('manual_trigger', 'Runs when started from the builder (POST /api/v1/workflows/:workflowId/manual-run).', {}, [],
    '{triggered_at, trigger: "manual"}'),
  trigger('cron_trigger', 'Runs on a schedule while the workflow is enabled and the proxy published; each slot runs once across instances; missed slots are not caught up.', {
    cron_expression: required('a cron expression (5 or 6 fields), e.g. "*/5 * * * *"'),
    timezone: text('an IANA time zone, e.g. "Europe/Paris" (default UTC)'),
    enabled: { type: 'boolean', description: 'false pauses the schedule' }
  }, ['cron_expression'], '{triggered_at (the slot time), trigger: "cron", schedule, timezone, run_id (the execution id)}'),
  trigger('broker_consumer', 'Runs for every message consumed from a broker topic.', {
    credentials_id: required('id of the broker credential'),
    topic: required('topic to consume'),
    consumer_group: text('consumer group shared by the instances (default: gatehouse-<proxy id>)'),
    enabled: { type: 'boolean', description: 'false stops consuming' },
    commit_mode: { type: 'string', enum: ['after_success', 'per_message'], description: 'after_success (default): an offset is committed once its run succeeded (a failed run is retried, 3 runs in all, then reported and committed); per_message: committed after every run' },
    poll_timeout_ms: { type: 'integer', minimum: 1, maximum: 600_000, description: 'an integer from 1 to 600000' }
  }, ['credentials_id', 'topic'], '{topic, partition, offset, key, message, headers, run_id}'),
  trigger('imap_trigger', 'Runs once for every new unseen email in a mailbox (one instance owns the mailbox; IDLE where offered, polling otherwise).', {
    credentials_id: required('id of the imap credential'),
    mailbox: text('mailbox to watch (default "Inbox")'),
    poll_interval_seconds: { type: 'integer', minimum: 1, maximum: 86_400, description: 'seconds between mailbox checks, 1 to 86400 (default 60; with IDLE a safety check)' },
    mark_as_seen: { type: 'boolean', description: 'mark processed emails as seen' }
  }, ['credentials_id'], '{subject, from, to, date, body_text, body_html (decoded, each at most 1 MiB), uid, mailbox, run_id}'),
  plain('http_request_node', 'action', 'Calls an HTTP API. A non-2xx answer fails the run unless continue_on_error is on or a condition node downstream (right after it or later) tests {{<name>.response.status}}.', {
    method: { anyOf: [{ type: 'string', pattern: '^(?:[Gg][Ee][Tt]|[Pp][Oo][Ss][Tt]|[Pp][Uu][Tt]|[Pp][Aa][Tt][Cc][Hh]|[Dd][Ee][Ll][Ee][Tt][Ee]|[Hh][Ee][Aa][Dd]|[Oo][Pp][Tt][Ii][Oo][Nn][Ss])$' }, expr], description: 'GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS (default GET)' },
    url: required('absolute http:// or https:// URL; may embed {{ }} expressions'),
    headers: object('an object of header names to values'),
    timeout_ms: int(1, 3_600_000),
    credentials_id: { type: ['string', 'null'], description: 'id of an http_basic, http_bearer, http_header or oauth2_client_credentials credential: its secret is added to the request (never to another origin after a redirect) and stays out of the workflow' },
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { type: 'string', enum: ['json', 'raw', 'form_data', 'multipart'] }, content: {} },
      description: '{type: "json"|"raw"|"form_data"|"multipart", content}'
    },
    continue_on_error: { type: 'boolean', description: 'true: a non-2xx answer is output like any other and the run goes on (default false: it fails the run unless a condition downstream reads the status); a network failure still fails the run' }
  }, ['url'], '{response: {status, headers, body}, timedOut}', 'One output. To handle a non-2xx answer, connect a condition_node that tests {{<name>.response.status}} downstream (directly or after other nodes), or set continue_on_error.'),
  plain('parallel_node', 'flow', 'Passes its input to every outgoing edge; the branches run concurrently.', {
    branches: int(1, 100)
  }, [], 'its input, on every outgoing edge', 'Connect one outgoing edge per branch (no handles; branches, when set, must equal their count); join them again with a merge_node.'),
  plain('merge_node', 'flow', 'Waits for all connected inputs, then joins the outputs of the branches that ran.', {}, [],
    '{items: [outputs of the branches that ran]}', 'Connect two or more incoming edges. It runs once every input has either delivered or been skipped (a condition\'s other handle): after both outputs of a condition it joins the one that ran.'),
  plain('set_node', 'data', 'Builds an object from values (each may be an expression).', {
    values: object('an object whose values may be {{ }} expressions')
  }, [], '{output: <values>}', 'One input, one output.'),
  {
    ...plain('condition_node', 'flow', 'Tests conditions and follows its true or its false edges.', {
      conditions: {
        anyOf: [{
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['left', 'operator'],
            properties: { left: {}, operator: { type: 'string', enum: CONDITION_OPERATORS }, right: {} }
          }
        }, expr],
        description: `a list of {left, operator, right}; operators ${CONDITION_OPERATORS.join(', ')}`
      },
      combine: { type: 'string', enum: ['and', 'or'], description: '"and" (default) or "or"' }
    }, [], '{result, input}', 'Every outgoing edge needs sourceHandle "true" or "false".'),
    requires_source_handle: true,
    supported_source_handles: ['true', 'false'],
    default_source_handle: 'true'
  },
  plain('delay_node', 'flow', 'Waits, then passes its input on (aborted at the run deadline).', {
    delay_ms: int(0, 3_600_000)
  }, [], 'its input', 'One input, one output. delay_ms defaults to 0.'),
  {
    ...plain('response_node', 'action', 'The answer of the workflow (status, headers, body).', {
      status: int(100, 599),
      headers: object('an object of header names to values'),
      body: anyValue('any value; text, object or a {{ }} expression')
    }, [], '{status, headers, body}: the answer the gateway sends', 'Ends a path: nothing needs to follow it. Put one on every path that should answer; the first one that runs answers.'),
    terminal_node: true
  },
  {
    ...plain('loop_node', 'flow', 'Runs the nodes on its loop edge once per item, then follows its done edge.', {
      items: { anyOf: [{ type: 'array' }, expr], description: 'a {{ }} expression giving a list (or a literal list)' }
    }, ['items'], 'per item: the item with $json[\'$item\'], $json[\'$index\'], $json[\'$loop\']; on done: {items: [outputs of each iteration]}',
    'Wire the per-item body from sourceHandle "loop" (or empty) and lead the body\'s last node back to the loop node; wire what follows from sourceHandle "done".'),
    requires_source_handle: false,
    supported_source_handles: ['loop', 'done'],
    default_source_handle: 'loop'
  },
  plain('xml_node', 'data', 'Converts XML to JSON (optionally unwrapping a SOAP body) or JSON to XML.', {
    mode: { type: 'string', enum: ['xml_to_json', 'json_to_xml'], description: '"xml_to_json" (default) or "json_to_xml"' },
    source: anyValue('a {{ }} expression giving the XML text or the object to convert'),
    unwrap_soap: bool
  }, ['source'], '{output: <converted value>}', 'One input, one output. mode defaults to "xml_to_json".'),
  plain('execute_subworkflow', 'flow', 'Runs another proxy\'s workflow with an input and returns its answer.', {
    workflow_id: required('the workflow_id of the proxy whose workflow runs'),
    input: anyValue('a {{ }} expression giving the sub-workflow\'s trigger output')
  }, ['workflow_id'], 'the sub-workflow\'s response body (or its last node\'s output)', 'One input, one output. Sub-workflows nest at most 5 levels.'),
  plain('code_node', 'data', 'Runs JavaScript in a sandbox with memory and time limits; its return value is the output.', {
    code: required('the body of a JavaScript function; $json, $input, $workflow, $execution are in scope')
  }, ['code'], 'the value the code returns (JSON)', 'One input, one output. The code is JavaScript, not an expression.'),
  {
    ...plain('cache_lookup_node', 'data', 'Reads or writes the shared cache (memory or Redis).', {
      operation: { type: 'string', enum: ['get', 'set'], description: '"get" (default) or "set"' },
      key: required('cache key; may embed {{ }} expressions'),
      value: anyValue('for set: the value to store'),
      ttl_seconds: int(1, 2_592_000)
    }, ['key'], 'get: {hit, value}; set: {key, value, ttl_seconds} (ttl default 3600)',
    'For operation "get", every outgoing edge needs sourceHandle "hit" or "miss"; "set" has one output and no handles.'),
    requires_source_handle: true,
    supported_source_handles: ['hit', 'miss'],
    default_source_handle: 'hit'
  }
]

const BY_TYPE = new Map(NODE_CATALOGUE.map(d => [d.type, d]))

export function describeNode (type: string): NodeDescription | undefined {
  return BY_TYPE.get(type)
}

export const NODE_TYPE_NAMES: readonly string[] = NODE_CATALOGUE.map(d => d.type)
export const ENTRY_TRIGGER_TYPES: readonly string[] = NODE_CATALOGUE.filter(d => d.entry_trigger).map(d => d.type)

/** The handles a node's outgoing edges may use; null: a single output (any handle name is ignored). */
export function sourceHandlesOf (node: { type: string, settings?: Record<string, unknown> }): { handles: string[], required: boolean } | null {
  if (node.type === 'cache_lookup_node') return node.settings?.operation === 'set' ? null : { handles: ['hit', 'miss'], required: true }
  if (node.type === 'loop_node') return { handles: ['loop', '', 'done'], required: false }
  const d = BY_TYPE.get(node.type)
  if (d === undefined || d.supported_source_handles.length === 0) return null
  return { handles: d.supported_source_handles, required: d.requires_source_handle }
}

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
