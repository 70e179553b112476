import type { ErrorDetail } from '../../common/errors.js'
import type { Metrics } from '../observability/metrics.js'
import { OPENMETRICS_TYPE, wantsOpenMetrics } from '../observability/open-metrics.js'
import { listRequestLogsOp, metricsSnapshotOp, type ObservabilityDeps } from '../operations/observability.js'
import type { RequestLogFilter, RequestLogStore } from '../store/request-logs.js'
import type { PageQuery } from '../store/rows.js'
import { mountOperations, op, type OperationRoute } from './operation-routes.js'
import type { Router } from './router.js'
import { invalidListQuery, pageQuery } from './validation.js'

/** The request log's query: page, order and filters, every problem reported at once. */
function requestLogQuery (q: URLSearchParams): { page: PageQuery & { order: 'asc' | 'desc' }, filter: RequestLogFilter } {
  const problems: ErrorDetail[] = []
  const pq = pageQuery(q, { filters: ['collection_id', 'proxy_id', 'client_id', 'profile_id', 'status', 'method', 'since', 'until', 'trace_id'], order: 'desc', problems })
  const get = (k: string) => q.get(k) ?? undefined
  const status = get('status')
  if (status !== undefined && !/^\d{3}$/.test(status)) problems.push({ field: 'status', message: 'must be a 3-digit HTTP status' })
  for (const k of ['since', 'until']) {
    const v = get(k)
    if (v !== undefined && Number.isNaN(Date.parse(v))) problems.push({ field: k, message: 'must be an ISO 8601 time' })
  }
  const traceId = get('trace_id')?.toLowerCase()
  if (traceId !== undefined && !/^[0-9a-f]{32}$/.test(traceId)) problems.push({ field: 'trace_id', message: 'must be a trace id: 32 hexadecimal digits' })
  if (problems.length > 0) throw invalidListQuery(problems)
  return {
    page: pq,
    filter: {
      collection_id: get('collection_id'), proxy_id: get('proxy_id'), client_id: get('client_id'), profile_id: get('profile_id'),
      status: status === undefined ? undefined : Number(status), method: get('method')?.toUpperCase(), since: get('since'), until: get('until'), trace_id: traceId
    }
  }
}

export const observabilityRoutes: ReadonlyArray<OperationRoute<ObservabilityDeps>> = [
  op({ method: 'GET', path: '/api/v1/request-logs', input: r => requestLogQuery(r.query), operation: listRequestLogsOp }),
  op({ method: 'GET', path: '/api/v1/metrics', input: () => ({}), operation: metricsSnapshotOp })
]

/** Request log listing, metrics as JSON, and GET /metrics in Prometheus text format. */
export function registerObservabilityRoutes (router: Router, requestLogs: RequestLogStore, metrics: Metrics): void {
  mountOperations(router, { requestLogs, metrics }, observabilityRoutes)

  // Scrapers rarely carry tokens; the management listener is bound to loopback by default.
  router.add('GET', '/metrics', async ctx => {
    // OpenMetrics (with exemplars: trace ids beside duration buckets) only for a scraper that asks for it.
    const open = wantsOpenMetrics(ctx.req.headers.accept)
    const text = metrics.prometheus(open)
    ctx.res.writeHead(200, { 'content-type': open ? OPENMETRICS_TYPE : 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text)
    return undefined
  }, { public: true })
}
