/**
 * Trigger health, shared by every instance through the key-value cache (Redis
 * with CACHE_TYPE=redis): state, owner, last run, last error, next slot or lag.
 *
 *   trigger ──healthy/failing/run──▶ update(proxy) ──▶ kv `trigger-health:<proxy>` (TTL)
 *                                         └─ state changed ──▶ `trigger_status` event
 *
 * Records expire unless refreshed (the supervisor's heartbeat): a trigger that no
 * instance runs any more reads as `stopped`, never as a stale `running`.
 */
import type { KeyValueCache } from '../cache/types.js'
import type { EventSink } from '../events/types.js'
import type { Logger } from '../logger.js'
import type { TriggerKind, TriggerState } from './types.js'

export interface TriggerHealthRecord {
  proxy_id: string
  workflow_id: string
  trigger_type: TriggerKind
  state: TriggerState
  /** The instance that runs it (IMAP: the lock holder; cron: the one that claimed the last slot; broker: the one that ran the last message). */
  owner: string | null
  last_run_at: string | null
  last_run_status: string | null
  last_execution_id: string | null
  last_error: string | null
  last_error_at: string | null
  /** Cron: the next schedule slot. */
  next_slot: string | null
  /** Broker: messages behind the newest offset, summed over the partitions this instance holds. */
  lag: number | null
  updated_at: string
}

export type HealthPatch = Partial<Omit<TriggerHealthRecord, 'proxy_id' | 'workflow_id' | 'trigger_type' | 'updated_at'>>

export const HEALTH_TTL_MS = 30_000

export class TriggerHealth {
  readonly #kv: KeyValueCache
  readonly #events: EventSink
  readonly #logger: Logger
  /** Read-modify-write per proxy, one at a time on this instance. */
  readonly #chains = new Map<string, Promise<unknown>>()
  readonly runs = new Map<string, number>()
  readonly restarts = new Map<string, number>()

  constructor (deps: { kv: KeyValueCache, events: EventSink, logger: Logger }) {
    this.#kv = deps.kv
    this.#events = deps.events
    this.#logger = deps.logger
  }

  async get (proxyId: string): Promise<TriggerHealthRecord | undefined> {
    return await this.#kv.get(key(proxyId)) as TriggerHealthRecord | undefined
  }

  /** Merges `patch` into the record; a change of state goes on the event stream. */
  async update (id: { proxy_id: string, workflow_id: string, trigger_type: TriggerKind }, patch: HealthPatch): Promise<void> {
    const prev = this.#chains.get(id.proxy_id) ?? Promise.resolve()
    const next = prev.then(async () => {
      const before = await this.get(id.proxy_id)
      const now = new Date().toISOString()
      const record: TriggerHealthRecord = {
        state: 'stopped', owner: null, last_run_at: null, last_run_status: null, last_execution_id: null,
        last_error: null, last_error_at: null, next_slot: null, lag: null,
        ...before, ...patch, ...id, updated_at: now
      }
      await this.#kv.set(key(id.proxy_id), record, HEALTH_TTL_MS)
      const previous = before?.state ?? 'stopped'
      if (record.state !== previous) {
        this.#events.publish({ resource_kind: 'trigger_status', proxy_id: id.proxy_id, workflow_id: id.workflow_id, trigger_type: id.trigger_type, state: record.state, previous_state: previous })
      }
    }).catch((err: Error) => { this.#logger.warn({ err: err.message, proxy_id: id.proxy_id }, 'trigger health could not be recorded') })
    this.#chains.set(id.proxy_id, next)
    await next
    if (this.#chains.get(id.proxy_id) === next) this.#chains.delete(id.proxy_id)
  }

  countRun (kind: TriggerKind, status: string): void {
    const k = `${kind}\0${status}`
    this.runs.set(k, (this.runs.get(k) ?? 0) + 1)
  }

  countRestart (kind: TriggerKind): void {
    this.restarts.set(kind, (this.restarts.get(kind) ?? 0) + 1)
  }

  /** Prometheus text: runs by kind and status, restarts by kind, and the triggers this instance runs by kind and state. */
  prometheus (local: Array<{ kind: TriggerKind, state: TriggerState }>): string {
    const out = ['# HELP gatehouse_trigger_runs_total Workflow runs started by production triggers on this instance.', '# TYPE gatehouse_trigger_runs_total counter']
    for (const [k, n] of this.runs) {
      const [kind, status] = k.split('\0')
      out.push(`gatehouse_trigger_runs_total{kind="${kind}",status="${status}"} ${n}`)
    }
    out.push('# HELP gatehouse_trigger_restarts_total Triggers restarted after a failure or a stall on this instance.', '# TYPE gatehouse_trigger_restarts_total counter')
    for (const [kind, n] of this.restarts) out.push(`gatehouse_trigger_restarts_total{kind="${kind}"} ${n}`)
    out.push('# HELP gatehouse_triggers Production triggers active on this instance, by state.', '# TYPE gatehouse_triggers gauge')
    const counts = new Map<string, number>()
    for (const t of local) counts.set(`${t.kind}\0${t.state}`, (counts.get(`${t.kind}\0${t.state}`) ?? 0) + 1)
    for (const [k, n] of counts) {
      const [kind, state] = k.split('\0')
      out.push(`gatehouse_triggers{kind="${kind}",state="${state}"} ${n}`)
    }
    return out.join('\n') + '\n'
  }
}

const key = (proxyId: string) => `trigger-health:${proxyId}`
