/**
 * Trigger health: every production trigger (cron, broker, IMAP) with its state, owner, last
 * run, last error, and next slot (cron) or lag (broker). State: `running` (listening or
 * scheduled), `failing` (cannot listen; retrying), `stopped` (not wanted: draft, disabled,
 * inactive collection, enabled:false; or wanted but no instance runs it). The last run is what
 * an instance reported; where none has (a stopped trigger, or health not yet reported since a
 * restart with the memory cache), it is the newest stored execution record of a trigger run.
 */
import { notFound } from '../../common/errors.js'
import type { Proxy } from '../../common/types.js'
import { lastTriggerRuns, type LastTriggerRun } from '../store/executions.js'
import { listWorkflowProxies } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { TriggerHealth, TriggerHealthRecord } from '../triggers/health.js'
import { wantedTrigger } from '../triggers/supervisor.js'
import { entryTriggerOf, isProductionKind } from '../triggers/types.js'
import type { Caller } from './types.js'

export interface TriggerDeps { store: Store, health: TriggerHealth }
export type TriggerView = ReturnType<typeof view>
type Listed = Array<{ proxy: Proxy, collectionActive: boolean }>

export async function listTriggersOp (deps: TriggerDeps, _caller: Caller, _input: Record<string, never>): Promise<{ items: TriggerView[], next_cursor: null }> {
  return { items: await views(deps, await productionTriggers(deps.store)), next_cursor: null }
}

export async function getTriggerOp (deps: TriggerDeps, _caller: Caller, input: { proxyId: string }): Promise<TriggerView> {
  const found = await productionTriggers(deps.store, input.proxyId)
  const [x] = found
  if (x === undefined) throw notFound(`No production trigger belongs to proxy '${input.proxyId}'.`)
  const [v] = await views(deps, [x])
  return v!
}

async function productionTriggers (store: Store, proxyId?: string): Promise<Listed> {
  return (await listWorkflowProxies(store, proxyId)).filter(x => isProductionKind(entryTriggerOf(x.proxy.workflow)?.type))
}

/** Health of the wanted triggers; the store is read only for those no instance has reported a run of. */
async function views (deps: TriggerDeps, list: Listed): Promise<TriggerView[]> {
  const wanted = list.map(x => x.collectionActive && wantedTrigger(x.proxy) !== null)
  const health = await Promise.all(list.map(async (x, i) => wanted[i] === true ? await deps.health.get(x.proxy.id) : undefined))
  const stored = await lastTriggerRuns(deps.store, list.filter((_, i) => health[i]?.last_run_at == null).map(x => x.proxy.workflow_id))
  return list.map((x, i) => view(x.proxy, x.collectionActive, wanted[i] === true, health[i], stored.get(x.proxy.workflow_id)))
}

function view (p: Proxy, collectionActive: boolean, wanted: boolean, h: TriggerHealthRecord | undefined, stored: LastTriggerRun | undefined) {
  const node = entryTriggerOf(p.workflow)!
  const last = h?.last_run_at != null
    ? { at: h.last_run_at, status: h.last_run_status, id: h.last_execution_id }
    : stored !== undefined ? { at: stored.finished_at, status: stored.status, id: stored.id } : undefined
  return {
    proxy_id: p.id,
    workflow_id: p.workflow_id,
    proxy_name: p.name,
    trigger_type: node.type,
    node_id: node.id,
    state: h?.state ?? 'stopped',
    stopped_reason: wanted ? (h === undefined ? 'no instance runs this trigger' : null) : reason(p, collectionActive),
    owner: h?.owner ?? null,
    last_run_at: last?.at ?? null,
    last_run_status: last?.status ?? null,
    last_execution_id: last?.id ?? null,
    last_error: h?.last_error ?? null,
    last_error_at: h?.last_error_at ?? null,
    next_slot: h?.next_slot ?? null,
    lag: h?.lag ?? null,
    updated_at: h?.updated_at ?? null
  }
}

function reason (p: Proxy, collectionActive: boolean): string {
  if (!collectionActive) return 'its collection is disabled'
  if (p.status !== 'published') return 'the proxy is a draft'
  if (!p.workflow_enabled) return 'the workflow is disabled'
  return 'the trigger node has enabled: false'
}
