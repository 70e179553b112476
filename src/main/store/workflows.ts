/** Finding a proxy by the id its workflow routes use (`/api/v1/workflows/:workflowId/...`). */
import { notFound } from '../../common/errors.js'
import type { Proxy } from '../../common/types.js'
import { toProxy } from './proxies.js'
import type { Queryable } from './types.js'

export async function getProxyByWorkflowId (q: Queryable, workflowId: string): Promise<Proxy> {
  const { rows } = await q.query('SELECT * FROM proxies WHERE workflow_id = $1', [workflowId])
  if (rows.length === 0) throw notFound(`Workflow '${workflowId}' does not exist.`)
  return toProxy(rows[0])
}

/** Saved definitions of the given workflows (unknown ids are left out). */
export async function definitionsByWorkflowId (q: Queryable, workflowIds: string[]): Promise<Map<string, Proxy>> {
  if (workflowIds.length === 0) return new Map()
  const { rows } = await q.query('SELECT * FROM proxies WHERE workflow_id = ANY($1::text[])', [workflowIds])
  return new Map(rows.map(r => { const p = toProxy(r); return [p.workflow_id, p] }))
}
