/** Reading the audit log (viewer). */
import type { Page } from '../../common/types.js'
import { listAuditEntries, type AuditEntry, type AuditFilter } from '../store/audit.js'
import type { PageQuery } from '../store/rows.js'
import type { Caller, OperationDeps } from './types.js'

export async function listAuditEntriesOp (deps: Pick<OperationDeps, 'store'>, _caller: Caller, input: { page: PageQuery, filter: AuditFilter }): Promise<Page<AuditEntry>> {
  return await listAuditEntries(deps.store, input.page, input.filter)
}
