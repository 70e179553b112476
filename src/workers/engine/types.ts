/** What a workflow run receives (everything: workers open no connections) and what it returns. */
import type { MessagePort } from 'node:worker_threads'
import type { WorkflowDefinition } from '../../common/types.js'
import type { FinishedSpan, TraceContext } from '../../common/trace-context.js'

/** An HTTP credential as http_request_node applies it. */
export type HttpCredential =
  | { type: 'http_basic', config: { username: string, password: string } }
  | { type: 'http_bearer', config: { token: string } }
  | { type: 'http_header', config: { name: string, value: string } }
  | { type: 'oauth2_client_credentials', config: { token_url: string, client_id: string, client_secret: string, scope?: string } }

export interface RunTask {
  /** The definition; may be left out when `definition_key` names one this worker compiled already. */
  definition?: WorkflowDefinition
  /** A saved definition's identity (changes with every save): its compiled plan is cached per worker. */
  definition_key?: string
  /**
   * Which per-node records (`nodes`, `node_inputs`) travel back: `always` (default),
   * `on_error` (only when the run did not succeed), `never`. Gateway runs whose record
   * will not be stored ask for less, so the result is cheap to send between threads.
   */
  records?: 'always' | 'on_error' | 'never'
  workflow: { id: string, name?: string, proxy_id?: string }
  execution_id: string
  /** Output of the entry trigger (for http_trigger: `{ request: {...} }`). */
  trigger_output: unknown
  /** Stand-in outputs for nodes (test and partial runs); those nodes do not run. */
  pinned_outputs?: Record<string, unknown>
  /** Partial runs: start here (upstream nodes must be pinned) and/or stop after this node. */
  start_node?: string
  destination_node?: string
  /** Epoch ms after which the run stops with status `timeout`. */
  deadline: number
  /** Hosts or CIDRs outbound HTTP may reach although private or loopback. */
  outbound_allowlist: string[]
  /**
   * Opened HTTP credentials named by http_request_node `credentials_id`s (resolved by the main
   * thread, kept for a saved definition until any configuration change, so a rotated secret
   * applies from the next run after it); never stored in a record.
   */
  credentials?: Record<string, HttpCredential>
  /** Definitions reachable through execute_subworkflow, keyed by workflow_id (resolved by the main thread). */
  subworkflows?: Record<string, WorkflowDefinition>
  /** The proxy's max_concurrency: its runs and their sub-runs together execute at most this many at once in a worker (default 8). */
  concurrency?: number
  /** Nesting level of this run: 0 (or absent) for a top-level run. */
  depth?: number
  /** Main-thread bridge (events and cache requests); present only when the caller wants them. */
  port?: MessagePort
  /** Whether the main side answers cache requests on `port`. */
  kv?: boolean
  /**
   * The run's span (the main thread's): each node run becomes its child, and http_request_node
   * sends it on as `traceparent`. Absent: no tracing.
   */
  trace?: TraceContext
}

/** What the main thread sees as each node starts and ends (the builder's test stream). */
export type RunEvent =
  | { type: 'node_started', node_id: string, name: string, node_type: string, at: string, input: unknown }
  | { type: 'node_finished', node_id: string, name: string, node_type: string, at: string, duration_ms: number, output: unknown, status: 'success' | 'pinned' }
  | { type: 'node_failed', node_id: string, name: string, node_type: string, at: string, duration_ms: number, error: string }

/** Messages on the bridge port. Worker → main: event, kv request, end. Main → worker: kv answer. */
export type BridgeMessage =
  | { t: 'event', event: RunEvent }
  | { t: 'kv', id: number, op: 'get' | 'set', key: string, value?: unknown, ttl_ms?: number }
  | { t: 'kv_result', id: number, value?: unknown, error?: string }
  | { t: 'end' }

/** The cache as a node sees it (answered by the main thread). */
export interface NodeKv {
  get (key: string): Promise<unknown>
  set (key: string, value: unknown, ttlMs?: number): Promise<void>
}

export interface NodeRecord {
  node_id: string
  name: string
  type: string
  status: 'success' | 'error' | 'pinned'
  started_at: string
  duration_ms: number
  input: unknown
  output: unknown
  error?: string
  /** Inside a loop body: the iteration (0-based) this record belongs to. */
  loop_index?: number
  /** `{{ }}` expressions in the node's settings that referred to nothing (they became empty). */
  unresolved?: string[]
}

export interface WorkflowResponse { status: number, headers: Record<string, string>, body: unknown }

export interface ExecutionResult {
  status: 'success' | 'error' | 'timeout'
  started_at: string
  finished_at: string
  duration_ms: number
  nodes: NodeRecord[]
  /** Per-node inputs, kept for replay. */
  node_inputs: Record<string, unknown>
  response: WorkflowResponse | null
  error: { node_id: string | null, message: string } | null
  /** Set instead of running when the task carried only a definition_key this worker does not hold. */
  plan_missing?: true
  /** Node runs as finished spans, when the task's trace is sampled (sub-runs' included). */
  spans?: FinishedSpan[]
}


/** What a node's run function gets. */
export interface NodeContext {
  settings: Record<string, unknown>
  /** The settings as saved, before expressions (code_node's `code` is JavaScript, not a template). */
  rawSettings: Record<string, unknown>
  input: unknown
  inputs: unknown[]
  deadline: number
  signal: AbortSignal
  allowlist: string[]
  /** The node being run (for errors naming it). */
  node: { id: string, name: string, type: string }
  /** The shared cache, when the caller provided one. */
  kv?: NodeKv
  /** Inside a loop body: the current item, its index and `{node, index, total, first, last}`. */
  loop?: { item: unknown, index: number, loop: Record<string, unknown> }
  /** The run's context, for nodes that need more than their settings. */
  run: RunContextForNodes
  /** This node run's span as a parent: sent by http_request_node as `traceparent` (and `tracestate`). */
  trace?: TraceContext
}

/** What nodes such as code_node and execute_subworkflow read from the run. */
export interface RunContextForNodes {
  /** The task, its definition always present (filled in from the cached plan). */
  task: RunTask & { definition: WorkflowDefinition }
  /** Outputs of finished nodes by id. */
  outputs: ReadonlyMap<string, unknown>
  /** Runs another definition in this worker (execute_subworkflow). */
  runSub: (definition: WorkflowDefinition, workflowId: string, input: unknown) => Promise<ExecutionResult>
  /** loop_node: runs this node's body once for `item`; resolves to the iteration's last output. */
  iterate: (item: unknown, index: number, total: number) => Promise<unknown>
  /** True once a partial run reached its destination node (a loop then stops before `done`). */
  stopAfter: () => boolean
}

/** A node's result: its output, and for branching nodes the handles to follow. */
export interface NodeResult { output: unknown, handles?: string[] }

export class NodeError extends Error {
  override name = 'NodeError'
}
