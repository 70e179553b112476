/**
 * Saved versions of a proxy's workflow: every successful save or restore adds
 * one, in the same transaction as the proxy change, numbered 1, 2, … per workflow.
 * Listed newest first.
 */
import { randomUUID } from 'node:crypto'
import { notFound } from '../../common/errors.js'
import type { Page, WorkflowDefinition } from '../../common/types.js'
import { iso, json, page, type PageQuery } from './rows.js'
import type { Queryable } from './types.js'

export interface WorkflowVersion {
  id: string
  workflow_id: string
  proxy_id: string
  number: number
  definition: WorkflowDefinition | null
  enabled: boolean
  actor_sub: string | null
  /** The version this one restored, when it came from a restore. */
  restored_from: string | null
  created_at: string
  updated_at: string
}

const toVersion = (r: any): WorkflowVersion => ({
  id: r.id,
  workflow_id: r.workflow_id,
  proxy_id: r.proxy_id,
  number: Number(r.number),
  definition: json(r.definition),
  enabled: r.enabled,
  actor_sub: r.actor_sub ?? null,
  restored_from: r.restored_from ?? null,
  created_at: iso(r.created_at),
  updated_at: iso(r.created_at)
})

/** Adds the next version (inside the caller's transaction, which holds the proxy row lock). */
export async function insertWorkflowVersion (q: Queryable, v: Pick<WorkflowVersion, 'workflow_id' | 'proxy_id' | 'definition' | 'enabled' | 'actor_sub'> & { restored_from?: string | null }): Promise<WorkflowVersion> {
  const { rows } = await q.query(
    `INSERT INTO workflow_versions (id, workflow_id, proxy_id, number, definition, enabled, actor_sub, restored_from)
     VALUES ($1, $2, $3, (SELECT COALESCE(MAX(number), 0) + 1 FROM workflow_versions WHERE workflow_id = $2), $4, $5, $6, $7) RETURNING *`,
    [randomUUID(), v.workflow_id, v.proxy_id, v.definition === null ? null : JSON.stringify(v.definition), v.enabled, v.actor_sub, v.restored_from ?? null])
  return toVersion(rows[0])
}

export async function getWorkflowVersion (q: Queryable, workflowId: string, id: string): Promise<WorkflowVersion> {
  const { rows } = await q.query('SELECT * FROM workflow_versions WHERE workflow_id = $1 AND id = $2', [workflowId, id])
  if (rows.length === 0) throw notFound(`Version '${id}' of workflow '${workflowId}' does not exist.`)
  return toVersion(rows[0])
}

/** The newest version (null before the first save). */
export async function currentVersion (q: Queryable, workflowId: string): Promise<{ id: string, number: number } | null> {
  const { rows } = await q.query('SELECT id, number FROM workflow_versions WHERE workflow_id = $1 ORDER BY number DESC LIMIT 1', [workflowId])
  return rows.length === 0 ? null : { id: rows[0].id, number: Number(rows[0].number) }
}

export async function listWorkflowVersions (q: Queryable, workflowId: string, pq: PageQuery): Promise<Page<WorkflowVersion>> {
  return await page(q, 'SELECT * FROM workflow_versions WHERE workflow_id = $1', [workflowId], pq, toVersion, 'desc')
}

