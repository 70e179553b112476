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
import { lastTriggerRuns } from '../store/executions.js'
import { toProxy } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { TriggerHealth, TriggerHealthRecord } from '../triggers/health.js'
import { wantedTrigger } from '../triggers/supervisor.js'
import { entryTriggerOf, isProductionKind } from '../triggers/types.js'
import type { Router } from './router.js'

export function registerTriggerRoutes (router: Router, deps: { store: Store, health: TriggerHealth }): void {
  type LastRuns = Awaited<ReturnType<typeof lastTriggerRuns>>
  const view = async (p: Proxy, collectionActive: boolean, stored: LastRuns) => {
    const node = entryTriggerOf(p.workflow)!
    const wanted = collectionActive && wantedTrigger(p) !== null
    const h: TriggerHealthRecord | undefined = wanted ? await deps.health.get(p.id) : undefined
    const record = stored.get(p.workflow_id)
    const last = h?.last_run_at != null
      ? { at: h.last_run_at, status: h.last_run_status, id: h.last_execution_id }
      : record !== undefined ? { at: record.finished_at, status: record.status, id: record.id } : undefined
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
  const rows = async (proxyId?: string) => {
    const r = await deps.store.query(`SELECT p.*, c.status AS collection_status FROM proxies p JOIN collections c ON c.id = p.collection_id
      WHERE p.workflow IS NOT NULL${proxyId !== undefined ? ' AND p.id = $1' : ''} ORDER BY p.seq`, proxyId !== undefined ? [proxyId] : [])
    return r.rows.map(row => ({ proxy: toProxy(row), active: row.collection_status === 'active' }))
      .filter(x => isProductionKind(entryTriggerOf(x.proxy.workflow)?.type))
  }

  const stored = async (list: Array<{ proxy: Proxy }>) => await lastTriggerRuns(deps.store, list.map(x => x.proxy.workflow_id))

  router.add('GET', '/api/v1/triggers', async () => {
    const list = await rows()
    const last = await stored(list)
    const items = await Promise.all(list.map(async x => await view(x.proxy, x.active, last)))
    return { status: 200, body: { items, next_cursor: null } }
  }, { role: 'viewer' })

  router.add('GET', '/api/v1/triggers/:proxyId', async ctx => {
    const [x] = await rows(ctx.params.proxyId)
    if (x === undefined) throw notFound(`No production trigger belongs to proxy '${ctx.params.proxyId}'.`)
    return { status: 200, body: await view(x.proxy, x.active, await stored([x])) }
  }, { role: 'viewer' })
}

function reason (p: Proxy, collectionActive: boolean): string {
  if (!collectionActive) return 'its collection is disabled'
  if (p.status !== 'published') return 'the proxy is a draft'
  if (!p.workflow_enabled) return 'the workflow is disabled'
  return 'the trigger node has enabled: false'
}
