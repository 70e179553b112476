/** What a workflow run receives (everything: workers open no connections) and what it returns. */
import type { WorkflowDefinition } from '../../common/types.js'

export interface RunTask {
  definition: WorkflowDefinition
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
}

/** What a node's run function gets. */
export interface NodeContext {
  settings: Record<string, unknown>
  input: unknown
  inputs: unknown[]
  deadline: number
  signal: AbortSignal
  allowlist: string[]
}

/** A node's result: its output, and for branching nodes the handles to follow. */
export interface NodeResult { output: unknown, handles?: string[] }

export class NodeError extends Error {
  override name = 'NodeError'
}
