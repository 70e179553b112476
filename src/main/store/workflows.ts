/** Finding a proxy by the id its workflow routes use (`/api/v1/workflows/:workflowId/...`). */
import { notFound } from '../../common/errors.js'
import type { Proxy, WorkflowDefinition } from '../../common/types.js'
import { json } from './rows.js'
import { toProxy } from './proxies.js'
import type { Queryable } from './types.js'

export async function getProxyByWorkflowId (q: Queryable, workflowId: string): Promise<Proxy> {
  const { rows } = await q.query('SELECT * FROM proxies WHERE workflow_id = $1', [workflowId])
  if (rows.length === 0) throw notFound(`Workflow '${workflowId}' does not exist.`)
  return toProxy(rows[0])
}

/** A workflow's saved definition (null when it has none or does not exist). */
export async function savedDefinition (q: Queryable, workflowId: string): Promise<WorkflowDefinition | null> {
  const { rows } = await q.query('SELECT workflow FROM proxies WHERE workflow_id = $1', [workflowId])
  return rows.length === 0 ? null : json<WorkflowDefinition | null>(rows[0].workflow)
}
