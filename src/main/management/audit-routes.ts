import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import { listAuditEntries, type AuditFilter } from '../store/audit.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { pageQuery } from './validation.js'

const TEXT_FILTERS = ['actor_sub', 'resource_kind', 'resource_id', 'action'] as const

/** GET /api/v1/audit-logs (viewer). */
export function registerAuditRoutes (router: Router, deps: Pick<ManagementDeps, 'store'>): void {
  router.add('GET', '/api/v1/audit-logs', async ctx => {
    const q = ctx.query
    const details: ErrorDetail[] = []
    const filter: AuditFilter = {}
    for (const k of TEXT_FILTERS) {
      const v = q.get(k)
      if (v !== null) filter[k] = v
    }
    const source = q.get('source')
    if (source !== null) {
      if (source === 'rest' || source === 'mcp') filter.source = source
      else details.push({ field: 'source', message: "must be 'rest' or 'mcp'" })
    }
    for (const k of ['since', 'until'] as const) {
      const v = q.get(k)
      if (v === null) continue
      const t = Date.parse(v)
      if (Number.isNaN(t)) details.push({ field: k, message: 'must be an ISO 8601 time, e.g. 2025-05-06T07:08:09Z' })
      else filter[k] = new Date(t).toISOString()
    }
    const order = q.get('order')
    if (order !== null) {
      if (order === 'asc' || order === 'desc') filter.order = order
      else details.push({ field: 'order', message: "must be 'asc' or 'desc'" })
    }
    if (details.length > 0) throw validationFailed(`The audit log filter is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
    return { status: 200, body: await listAuditEntries(deps.store, pageQuery(q), filter) }
  })
}
