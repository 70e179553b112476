/** Reading what the gateway recorded: the request log and the metrics snapshot (viewer). */
import type { Page } from '../../common/types.js'
import type { Metrics } from '../observability/metrics.js'
import type { RequestLogFilter, RequestLogItem, RequestLogStore } from '../store/request-logs.js'
import type { PageQuery } from '../store/rows.js'
import type { Caller } from './types.js'

export interface ObservabilityDeps { requestLogs: RequestLogStore, metrics: Metrics }

export async function listRequestLogsOp (deps: ObservabilityDeps, _caller: Caller, input: { page: PageQuery & { order?: 'asc' | 'desc' }, filter: RequestLogFilter }): Promise<Page<RequestLogItem>> {
  return await deps.requestLogs.list(input.page, input.filter)
}

export async function metricsSnapshotOp (deps: ObservabilityDeps, _caller: Caller, _input: Record<string, never>): Promise<ReturnType<Metrics['snapshot']>> {
  return deps.metrics.snapshot()
}
