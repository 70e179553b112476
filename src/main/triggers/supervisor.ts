/**
 * The trigger supervisor: keeps exactly the production triggers that should
 * run on this instance running, each at its proxy's current version.
 *
 *   route reload (start, poll) ──▶ reconcileAll(published proxies)
 *   trigger sync broadcast     ──▶ syncProxy(id) / syncCollection(id)     ──▶ apply: stop / start / restart
 *                                  (reads that proxy or that collection's)
 *   heartbeat (every beat)     ──▶ stalled trigger? restart : refresh health
 *
 * Every change goes through one queue, so a stop always finishes before the
 * same proxy starts again. A trigger runs only while its proxy is published in
 * an active collection and its workflow is enabled (spec: enabled flag rules 2-3).
 */
import { randomUUID } from 'node:crypto'
import type { Proxy, WorkflowNode } from '../../common/types.js'
import type { Logger } from '../logger.js'
import { getCollection } from '../store/collections.js'
import { loadServedProxiesOf } from '../store/routing.js'
import { getProxy } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { Runner } from '../workflows/runner.js'
import type { HealthPatch, TriggerHealth } from './health.js'
import { entryTriggerOf, isProductionKind, type StartTrigger, type TriggerHandle, type TriggerKind, type TriggerScope, type TriggerState } from './types.js'

/** What a run's span names as its trigger (gatehouse.execution.trigger). */
const TRIGGER_NAMES: Record<string, string> = { cron_trigger: 'cron', imap_trigger: 'imap', broker_consumer: 'kafka' }

interface Entry {
  proxy: Proxy
  kind: TriggerKind
  node: WorkflowNode
  abort: AbortController
  handle: TriggerHandle
  lastBeat: number
  /** What this instance last reported (refreshed by the heartbeat); null while it reports nothing (a standby). */
  report: HealthPatch | null
  state: TriggerState
}

export interface SupervisorDeps {
  store: Store
  runner: Pick<Runner, 'run'>
  health: TriggerHealth
  logger: Logger
  instanceId: string
  starters: Partial<Record<TriggerKind, StartTrigger>>
  /** How often liveness is checked and health refreshed. */
  heartbeatMs: number
  /** A trigger that has not beaten for this long is restarted. */
  stallMs: number
}

export interface TriggerSupervisor {
  /** The full set of proxies the gateway serves (published, in active collections). */
  reconcileAll (proxies: readonly Proxy[]): Promise<void>
  /** Brings the changed proxies (served now) and the removed ones (no longer served) to their wanted state. */
  reconcile (changed: readonly Proxy[], removed: readonly string[]): Promise<void>
  /** Re-reads one proxy from the store and applies it. */
  syncProxy (proxyId: string): Promise<void>
  /** Re-reads one collection's served proxies from the store and applies them (and stops what it no longer serves). */
  syncCollection (collectionId: string): Promise<void>
  /** Restarts the triggers that read this credential (its settings changed). */
  restartUsing (credentialId: string): Promise<void>
  /** Triggers active on this instance. */
  local (): Array<{ proxy_id: string, kind: TriggerKind, state: TriggerState }>
  close (): Promise<void>
}

/** The trigger node when the proxy's workflow should run on its own, else null. */
export function wantedTrigger (p: Proxy): { node: WorkflowNode, kind: TriggerKind } | null {
  if (p.status !== 'published' || !p.workflow_enabled || p.workflow === null) return null
  const node = entryTriggerOf(p.workflow)
  if (node === undefined || !isProductionKind(node.type) || node.settings.enabled === false) return null
  return { node, kind: node.type }
}

export function createTriggerSupervisor (deps: SupervisorDeps): TriggerSupervisor {
  const { logger, health } = deps
  const entries = new Map<string, Entry>()
  let queue: Promise<void> = Promise.resolve()
  let closed = false
  const serial = async (fn: () => Promise<void>): Promise<void> => {
    const p = queue.then(fn)
    queue = p.catch((err: Error) => { logger.error({ err }, 'trigger reconciliation failed') })
    await queue
  }
  const ids = (e: Entry) => ({ proxy_id: e.proxy.id, workflow_id: e.proxy.workflow_id, trigger_type: e.kind })

  const report = (e: Entry, patch: HealthPatch) => {
    if (e.abort.signal.aborted) return
    e.report = { ...e.report, ...patch }
    if (patch.state !== undefined) e.state = patch.state
    void health.update(ids(e), e.report)
  }

  const start = (proxy: Proxy, node: WorkflowNode, kind: TriggerKind): void => {
    const abort = new AbortController()
    const e: Entry = { proxy, kind, node, abort, handle: { stop: async () => {} }, lastBeat: Date.now(), report: null, state: 'running' }
    const scope: TriggerScope = {
      proxy, node, kind, instanceId: deps.instanceId, signal: abort.signal,
      async run (output, trace) {
        const id = randomUUID()
        let status: string
        let error: string | null = null
        try {
          const { result } = await deps.runner.run({
            proxy: { id: proxy.id, workflow_id: proxy.workflow_id }, definition: proxy.workflow!, mode: 'trigger',
            trigger_output: { ...output, run_id: id }, execution_id: id, persist: 'settings',
            definition_key: `${proxy.id}:${proxy.workflow_id}:${proxy.version}`, lean: true,
            // A message's producer context continues (CONSUMER); cron and IMAP runs start a trace.
            trace: trace != null
              ? { parent: trace, remote: true, kind: 'consumer', trigger: TRIGGER_NAMES[kind] ?? kind }
              : { parent: null, kind: kind === 'broker_consumer' ? 'consumer' : 'internal', trigger: TRIGGER_NAMES[kind] ?? kind }
          })
          status = result.status
          error = result.error?.message ?? null
        } catch (err) {
          // The proxy's mailbox refused the run (full queue) or the run could not start.
          status = 'rejected'
          error = (err as Error).message
        }
        health.countRun(kind, status)
        const at = new Date().toISOString()
        report(e, { last_run_at: at, last_run_status: status, last_execution_id: id, owner: deps.instanceId, ...(error !== null ? { last_error: `run ${id}: ${error}`, last_error_at: at } : {}) })
        return { status: status as 'success', execution_id: id }
      },
      healthy (extra = {}) { e.lastBeat = Date.now(); report(e, { state: 'running', ...extra }) },
      failing (err) {
        e.lastBeat = Date.now()
        const message = err instanceof Error ? err.message : String(err)
        report(e, { state: 'failing', last_error: message, last_error_at: new Date().toISOString() })
      },
      standby () { e.lastBeat = Date.now(); e.report = null },
      beat () { e.lastBeat = Date.now() }
    }
    try {
      e.handle = (deps.starters[kind] ?? unsupported)(scope)
    } catch (err) {
      scope.failing(err)
    }
    entries.set(proxy.id, e)
  }

  const stop = async (e: Entry, markStopped: boolean): Promise<void> => {
    entries.delete(e.proxy.id)
    e.abort.abort()
    await e.handle.stop().catch((err: Error) => { logger.warn({ err: err.message, proxy_id: e.proxy.id }, 'a trigger did not stop cleanly') })
    if (markStopped) await health.update(ids(e), { state: 'stopped', owner: null, next_slot: null, lag: null })
  }

  /** Brings one proxy to its wanted state; `p` null: the proxy is not served at all. */
  const apply = async (id: string, p: Proxy | null): Promise<void> => {
    const cur = entries.get(id)
    // Never step back to an older version than the one running (a reload that read the store before a change).
    if (p !== null && cur !== undefined && p.version < cur.proxy.version) return
    const want = p === null ? null : wantedTrigger(p)
    if (cur !== undefined && want !== null && cur.proxy.version === p!.version) return
    if (cur !== undefined) await stop(cur, want === null)
    if (want !== null && !closed) start(p!, want.node, want.kind)
  }

  const beat = setInterval(() => {
    const now = Date.now()
    for (const e of entries.values()) {
      if (now - e.lastBeat > deps.stallMs) {
        logger.warn({ proxy_id: e.proxy.id, kind: e.kind }, 'trigger stalled (no heartbeat); restarting it')
        health.countRestart(e.kind)
        void serial(async () => {
          if (entries.get(e.proxy.id) !== e) return
          await stop(e, false)
          if (!closed) start(e.proxy, e.node, e.kind)
        })
      } else if (e.report !== null) {
        void health.update(ids(e), e.report)
      }
    }
  }, deps.heartbeatMs)
  beat.unref()

  return {
    reconcileAll: async proxies => await serial(async () => {
      const seen = new Set<string>()
      for (const p of proxies) { seen.add(p.id); if (entries.has(p.id) || wantedTrigger(p) !== null) await apply(p.id, p) }
      for (const id of [...entries.keys()]) if (!seen.has(id)) await apply(id, null)
    }),
    reconcile: async (changed, removed) => await serial(async () => {
      for (const id of removed) if (entries.has(id)) await apply(id, null)
      for (const p of changed) if (entries.has(p.id) || wantedTrigger(p) !== null) await apply(p.id, p)
    }),
    syncProxy: async proxyId => await serial(async () => {
      const p = await getProxy(deps.store, proxyId).catch(() => null)
      const served = p !== null && (await getCollection(deps.store, p.collection_id).catch(() => null))?.status === 'active'
      await apply(proxyId, served ? p : null)
    }),
    syncCollection: async collectionId => await serial(async () => {
      const served = await loadServedProxiesOf(deps.store, collectionId)
      const seen = new Set<string>()
      for (const p of served) { seen.add(p.id); if (entries.has(p.id) || wantedTrigger(p) !== null) await apply(p.id, p) }
      for (const e of [...entries.values()]) if (e.proxy.collection_id === collectionId && !seen.has(e.proxy.id)) await apply(e.proxy.id, null)
    }),
    restartUsing: async credentialId => await serial(async () => {
      for (const e of [...entries.values()]) {
        if (e.node.settings.credentials_id !== credentialId) continue
        await stop(e, false)
        if (!closed) start(e.proxy, e.node, e.kind)
      }
    }),
    local: () => [...entries.values()].map(e => ({ proxy_id: e.proxy.id, kind: e.kind, state: e.state })),
    async close () {
      closed = true
      clearInterval(beat)
      await serial(async () => { await Promise.all([...entries.values()].map(async e => { await stop(e, false) })) })
    }
  }
}

const unsupported: StartTrigger = scope => {
  throw new Error(`${scope.kind} triggers are not available in this build`)
}
