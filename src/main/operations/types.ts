/**
 * What every management operation is written against. An operation is a plain function
 *
 *   (deps, caller, input) -> result
 *
 * with no HTTP object in sight: it reads and writes through the store, throws coded AppErrors,
 * and ends with one named effect, `effects.changed(caller, ...events)` (publish the change
 * events, then move the configuration so every instance reloads). REST routes and MCP tools are
 * adapters over the same functions (src/main/management/operation-routes.ts).
 */
import type { Role } from '../auth/roles.js'
import type { EventInput } from '../events/types.js'
import type { Store } from '../store/types.js'

export type Source = 'rest' | 'mcp' | 'assistant'

/** Who asks (sub, role) and through what surface. */
export interface Caller {
  sub: string
  role: Role | null
  source: Source
  /** When the caller's token expires (epoch seconds), where known. */
  exp?: number
}

/** Receives the frames of a streaming operation (SSE events over REST, progress notifications over MCP). */
export type FrameSink = (event: string, data: unknown) => void

/** A change event as an operation names it; the effect adds who made it. */
export type Change = EventInput extends infer E ? E extends EventInput ? Omit<E, 'actor_sub'> : never : never

export interface Effects {
  /**
   * The one effect of a successful change: each event is published (with the caller as actor),
   * then the configuration moves once. With no events the configuration still moves (a bulk
   * change whose every item failed reloads as it always did).
   */
  changed (caller: Caller, ...changes: Change[]): void
}

export interface OperationDeps {
  store: Store
  effects: Effects
  /** The key that seals secrets (credentials, profile material), loaded on first use. */
  secretsKey: () => Promise<Buffer>
}

/** An operation's typed input for one record: its id and the version an If-Match named. */
export interface RecordRef { id: string, ifMatch?: number }
