/**
 * What a workflow node type is: one module per type (src/workers/nodes/<type>.ts)
 * exports a NodeType, and index.ts lists them. The engine, the plan, validation
 * and the catalogue read these fields; none of them names a node type.
 *
 *   description   the catalogue entry (GET /api/v1/workflows/nodes): settings schema,
 *                 outputs, handles, entry trigger, wiring hint
 *   run           the node's work in a worker (an explicit context in, output and handles out)
 *   the rest      optional hooks, each for one thing the engine or validation does for some types
 *
 * Both threads import node modules: a module's top level imports nothing that only works in a
 * worker, and a heavy library (QuickJS, the XML parser) is imported inside `run` on first use.
 */
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../common/types.js'
import type { NodeContext, NodeResult } from '../engine/types.js'
import type { NodeDescription } from '../../common/node-description.js'
import type { StatusTraits } from '../../common/status-handling.js'

// The catalogue entry's shape lives in common/ (the console's builder reads that type).
export type { NodeDescription }

/** A problem validation reports on a node (as src/main/workflows/definition.ts words them). */
export interface NodeProblem { node_id: string | null, field: string | null, message: string }

/** Handles a node's outgoing edges may use; null: a single output (any handle name is ignored). */
export interface SourceHandles { handles: string[], required: boolean }

/** What the main thread resolves for a node before its run leaves for a worker. */
export interface RunNeeds {
  /** The id of a credential the node applies (sent opened in the task). */
  credentialId?: (settings: Record<string, unknown>) => string | undefined
  /** The workflow_id of a sub-workflow the node calls (its definition is sent in the task). */
  subworkflowId?: (settings: Record<string, unknown>) => string | undefined
  /** The node computes for long (the run goes to the cpu lane of the pool). */
  cpu?: boolean
  /** The node reads or writes the shared cache (the run gets a message channel to it). */
  cache?: boolean
}

export interface NodeType extends StatusTraits {
  description: NodeDescription
  run: (ctx: NodeContext) => Promise<NodeResult>

  // Validation (main thread; pure)
  /** Handles by settings; default: the description's supported_source_handles. */
  sourceHandles?: (settings: Record<string, unknown>) => SourceHandles | null
  /**
   * Checks beyond the settings schema: [field, text] pairs, reported as
   * "Node '<name>' (<type>): <field> <text>."
   */
  checkSettings?: (settings: Record<string, unknown>) => Array<[string, string]>
  /** Checks that need the whole definition (edges); problems as they are reported. */
  checkInDefinition?: (node: WorkflowNode, def: WorkflowDefinition) => NodeProblem[]
  /** Settings that are text as saved, never expressions (code_node's JavaScript). */
  literalSettings?: readonly string[]

  // Running (worker)
  /** A loop: edges on these handles form its body, run once per item through `ctx.run.iterate`; cycles may pass through them. */
  bodyHandles?: readonly string[]
  /** The handles a pinned output follows (branching nodes); absent: every edge. */
  pinnedHandles?: (output: unknown) => string[] | undefined
  /** Its output is the run's answer (`{status, headers, body}`). */
  answers?: boolean
  /** After a successful run: may fail the node by throwing (http_request_node's non-2xx rule); `typeOf` is the registry's lookup. */
  afterRun?: (node: WorkflowNode, result: NodeResult, outEdges: ReadonlyMap<string, readonly WorkflowEdge[]>, nodes: ReadonlyMap<string, WorkflowNode>, typeOf: (type: string) => NodeType | undefined) => void

  // Main thread, before a run
  needs?: RunNeeds
  /** A trigger's output for a builder test run that sends no `input`. */
  sampleOutput?: () => unknown
  /**
   * An entry trigger's runs start from: gateway requests (`gateway`), the builder and the
   * management API only (`builder`), or the trigger itself while the proxy is published
   * (`itself`: schedules, brokers, mailboxes, kept by src/main/triggers/).
   */
  startedBy?: 'gateway' | 'builder' | 'itself'
}
