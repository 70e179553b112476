/**
 * Trigger health (viewer): every production trigger (cron, broker, IMAP) with
 * its state, owner, last run, last error, and next slot (cron) or lag (broker).
 *   GET /api/v1/triggers              { items: [...], next_cursor: null }
 *   GET /api/v1/triggers/:proxyId     one trigger
 * State: `running` (listening or scheduled), `failing` (cannot listen; retrying),
 * `stopped` (not wanted: draft, disabled, inactive collection, enabled:false;
 * or wanted but no instance runs it). The last run is what an instance reported;
 * where none has (a stopped trigger, or health not yet reported since a restart
 * with the memory cache), it is the newest stored execution record of a trigger run.
 */
import { notFound } from '../../common/errors.js'
import type { Proxy } from '../../common/types.js'
import { lastTriggerRuns, type LastTriggerRun } from '../store/executions.js'
import { toProxy } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { TriggerHealth, TriggerHealthRecord } from '../triggers/health.js'
import { wantedTrigger } from '../triggers/supervisor.js'
import { entryTriggerOf, isProductionKind } from '../triggers/types.js'
import type { Router } from './router.js'

export function registerTriggerRoutes (router: Router, deps: { store: Store, health: TriggerHealth }): void {
  const view = (p: Proxy, collectionActive: boolean, wanted: boolean, h: TriggerHealthRecord | undefined, stored: LastTriggerRun | undefined) => {
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
  /** Health of the wanted triggers; the store is read only for those no instance has reported a run of. */
  const views = async (list: Array<{ proxy: Proxy, active: boolean }>) => {
    const wanted = list.map(x => x.active && wantedTrigger(x.proxy) !== null)
    const health = await Promise.all(list.map(async (x, i) => wanted[i] ? await deps.health.get(x.proxy.id) : undefined))
    const stored = await lastTriggerRuns(deps.store, list.filter((_, i) => health[i]?.last_run_at == null).map(x => x.proxy.workflow_id))
    return list.map((x, i) => view(x.proxy, x.active, wanted[i], health[i], stored.get(x.proxy.workflow_id)))
  }
  const rows = async (proxyId?: string) => {
    const r = await deps.store.query(`SELECT p.*, c.status AS collection_status FROM proxies p JOIN collections c ON c.id = p.collection_id
      WHERE p.workflow IS NOT NULL${proxyId !== undefined ? ' AND p.id = $1' : ''} ORDER BY p.seq`, proxyId !== undefined ? [proxyId] : [])
    return r.rows.map(row => ({ proxy: toProxy(row), active: row.collection_status === 'active' }))
      .filter(x => isProductionKind(entryTriggerOf(x.proxy.workflow)?.type))
  }

  router.add('GET', '/api/v1/triggers', async () => {
    return { status: 200, body: { items: await views(await rows()), next_cursor: null } }
  }, { role: 'viewer' })

  router.add('GET', '/api/v1/triggers/:proxyId', async ctx => {
    const [x] = await rows(ctx.params.proxyId)
    if (x === undefined) throw notFound(`No production trigger belongs to proxy '${ctx.params.proxyId}'.`)
    return { status: 200, body: (await views([x]))[0] }
  }, { role: 'viewer' })
}

function reason (p: Proxy, collectionActive: boolean): string {
  if (!collectionActive) return 'its collection is disabled'
  if (p.status !== 'published') return 'the proxy is a draft'
  if (!p.workflow_enabled) return 'the workflow is disabled'
  return 'the trigger node has enabled: false'
}
