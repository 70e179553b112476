import type { ErrorDetail } from '../../common/errors.js'
import { listAuditEntriesOp } from '../operations/audit.js'
import type { OperationDeps } from '../operations/types.js'
import { AUDIT_SOURCES, type AuditFilter, type AuditSource } from '../store/audit.js'
import type { PageQuery } from '../store/rows.js'
import { op, type OperationRoute } from './operation-routes.js'
import { invalidListQuery, pageQuery } from './validation.js'

const TEXT_FILTERS = ['actor_sub', 'resource_kind', 'resource_id', 'action', 'tool'] as const

/** The audit log's query: page, order and filters, every problem reported at once. */
function auditQuery (q: URLSearchParams): { page: PageQuery, filter: AuditFilter } {
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
  return { page: pq, filter }
}

/** GET /api/v1/audit-logs (viewer). */
export const auditRoutes: ReadonlyArray<OperationRoute<Pick<OperationDeps, 'store'>>> = [
  op({ method: 'GET', path: '/api/v1/audit-logs', input: r => auditQuery(r.query), operation: listAuditEntriesOp })
]
