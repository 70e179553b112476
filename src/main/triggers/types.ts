/**
 * Production triggers: the workflows that start on their own (cron, broker,
 * IMAP). Each kind is one `start` function; the supervisor decides which run.
 */
import type { TraceContext } from '../../common/trace-context.js'
import type { Proxy, WorkflowDefinition, WorkflowNode } from '../../common/types.js'
import { PRODUCTION_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import type { ExecutionStatus } from '../store/executions.js'

/** The kinds this folder starts (one starter each); the node modules say which entry triggers start by themselves. */
export type TriggerKind = 'cron_trigger' | 'broker_consumer' | 'imap_trigger'

export type TriggerState = 'running' | 'stopped' | 'failing'

/** The definition's entry trigger node (validation guarantees exactly one in a saved definition). */
export function entryTriggerOf (def: WorkflowDefinition | null): WorkflowNode | undefined {
  return def?.nodes.find(n => n.type.endsWith('_trigger') || n.type === 'broker_consumer')
}

export function isProductionKind (type: string | undefined): type is TriggerKind {
  return PRODUCTION_TRIGGER_TYPES.includes(type ?? '')
}

/** What a running trigger may do: run its workflow once and report how it is doing. */
export interface TriggerScope {
  readonly proxy: Proxy
  readonly node: WorkflowNode
  readonly kind: TriggerKind
  readonly instanceId: string
  /** Aborted when the trigger is stopped or reconfigured. */
  readonly signal: AbortSignal
  /**
   * Runs the workflow with this trigger output (`run_id` is added); resolves to the run's status.
   * `trace`: the producer's context a message carried (its run continues that trace); else a new one.
   */
  run (output: Record<string, unknown>, trace?: TraceContext | null): Promise<{ status: ExecutionStatus | 'rejected', execution_id: string }>
  /** The trigger listens (or schedules) as it should. */
  healthy (extra?: { next_slot?: string | null, lag?: number | null, owner?: string | null }): void
  /** The trigger cannot listen; it keeps retrying. */
  failing (err: unknown): void
  /** This instance stands by (another one owns the trigger): it stops reporting health. */
  standby (): void
  /** Called by the heartbeat: proof of life (a stalled trigger stops calling it). */
  beat (): void
}

export interface TriggerHandle {
  /** Resolves once the trigger let go of everything it held (connections, locks). */
  stop (): Promise<void>
}

export type StartTrigger = (scope: TriggerScope) => TriggerHandle
