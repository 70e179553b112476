import type { ErrorDetail } from '../../common/errors.js'
import { AUDIT_SOURCES, listAuditEntries, type AuditFilter, type AuditSource } from '../store/audit.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { invalidListQuery, pageQuery } from './validation.js'

const TEXT_FILTERS = ['actor_sub', 'resource_kind', 'resource_id', 'action', 'tool'] as const

/** GET /api/v1/audit-logs (viewer). */
export function registerAuditRoutes (router: Router, deps: Pick<ManagementDeps, 'store'>): void {
  router.add('GET', '/api/v1/audit-logs', async ctx => {
    const q = ctx.query
    const details: ErrorDetail[] = []
    const pq = pageQuery(q, { filters: [...TEXT_FILTERS, 'source', 'since', 'until'], order: 'desc', problems: details })
    const filter: AuditFilter = { order: pq.order }
    for (const k of TEXT_FILTERS) {
      const v = q.get(k)
      if (v !== null) filter[k] = v
    }
    const source = q.get('source')
    if (source !== null) {
      if (AUDIT_SOURCES.includes(source as AuditSource)) filter.source = source as AuditSource
      else details.push({ field: 'source', message: `must be one of ${AUDIT_SOURCES.map(s => `'${s}'`).join(', ')}` })
    }
    for (const k of ['since', 'until'] as const) {
      const v = q.get(k)
      if (v === null) continue
      const t = Date.parse(v)
      if (Number.isNaN(t)) details.push({ field: k, message: 'must be an ISO 8601 time, e.g. 2025-05-06T07:08:09Z' })
      else filter[k] = new Date(t).toISOString()
    }
    if (details.length > 0) throw invalidListQuery(details)
    return { status: 200, body: await listAuditEntries(deps.store, pq, filter) }
  })
}
