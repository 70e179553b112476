/**
 * Execution records of workflow runs: status, timing, the trigger output, every
 * node's input and output, the answer and the error with its node. Listed newest
 * first; pruned to the newest N per workflow.
 */
import { notFound } from '../../common/errors.js'
import type { Page } from '../../common/types.js'
import { iso, json, page, whereOf, type PageQuery } from './rows.js'
import type { Queryable } from './types.js'

export type ExecutionMode = 'gateway' | 'test' | 'partial' | 'node' | 'manual' | 'replay' | 'trigger'
export type ExecutionStatus = 'success' | 'error' | 'timeout'

export interface ExecutionRecord {
  id: string
  workflow_id: string
  proxy_id: string
  mode: ExecutionMode
  status: ExecutionStatus
  started_at: string
  finished_at: string
  duration_ms: number
  trigger_output: unknown
  node_inputs: Record<string, unknown>
  nodes: unknown[]
  response: unknown
  error: { node_id: string | null, message: string } | null
  /** The saved workflow version that ran (null for a posted definition or before the first save). */
  workflow_version: number | null
  /** The execution this run replayed. */
  replay_of: string | null
  /** The run's trace when it was sampled (exported), else null. */
  trace_id: string | null
  /** Whether this record is stored (runtime_settings decide; partial and node runs never are). */
  persisted: boolean
  created_at: string
  updated_at: string
}

const toRecord = (r: any): ExecutionRecord => ({
  id: r.id,
  workflow_id: r.workflow_id,
  proxy_id: r.proxy_id,
  mode: r.mode,
  status: r.status,
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
  duration_ms: Number(r.duration_ms),
  trigger_output: json(r.trigger_output),
  node_inputs: json(r.node_inputs),
  nodes: json(r.nodes),
  response: json(r.response),
  error: json(r.error),
  workflow_version: r.workflow_version === null ? null : Number(r.workflow_version),
  replay_of: r.replay_of ?? null,
  trace_id: r.trace_id ?? null,
  persisted: true,
  created_at: iso(r.created_at),
  updated_at: iso(r.created_at)
})

const jsonb = (v: unknown): string | null => v === undefined || v === null ? null : pgJson(v)

/** JSON that jsonb accepts: PostgreSQL refuses the NUL character inside text. */
export function pgJson (v: unknown): string {
  return JSON.stringify(v).replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd')
}

export async function insertExecution (q: Queryable, e: ExecutionRecord): Promise<void> {
  await q.query(
    `INSERT INTO executions (id, workflow_id, proxy_id, mode, status, started_at, finished_at, duration_ms, trigger_output, node_inputs, nodes,
       response, error, workflow_version, replay_of, trace_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    [e.id, e.workflow_id, e.proxy_id, e.mode, e.status, e.started_at, e.finished_at, Math.round(e.duration_ms), jsonb(e.trigger_output),
      pgJson(e.node_inputs), pgJson(e.nodes), jsonb(e.response), jsonb(e.error), e.workflow_version, e.replay_of, e.trace_id ?? null])
}

/** Keeps the newest `keep` records of a workflow. */
export async function pruneExecutions (q: Queryable, workflowId: string, keep: number): Promise<void> {
  await q.query(
    `DELETE FROM executions WHERE workflow_id = $1 AND seq <= (
       SELECT seq FROM executions WHERE workflow_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`, [workflowId, keep])
}

export async function getExecution (q: Queryable, workflowId: string, id: string): Promise<ExecutionRecord> {
  const { rows } = await q.query('SELECT * FROM executions WHERE workflow_id = $1 AND id = $2', [workflowId, id])
  if (rows.length === 0) throw notFound(`Execution '${id}' of workflow '${workflowId}' does not exist.`)
  return toRecord(rows[0])
}

export interface LastTriggerRun { id: string, status: ExecutionStatus, finished_at: string }

/** The newest stored run started by a production trigger, per workflow (for trigger health when no instance has reported one). */
export async function lastTriggerRuns (q: Queryable, workflowIds: string[]): Promise<Map<string, LastTriggerRun>> {
  const out = new Map<string, LastTriggerRun>()
  if (workflowIds.length === 0) return out
  const { rows } = await q.query(`SELECT DISTINCT ON (workflow_id) workflow_id, id, status, finished_at FROM executions
    WHERE workflow_id = ANY($1::text[]) AND mode = 'trigger' ORDER BY workflow_id, seq DESC`, [workflowIds])
  for (const r of rows as any[]) out.set(r.workflow_id, { id: r.id, status: r.status, finished_at: iso(r.finished_at) })
  return out
}

export async function listExecutions (q: Queryable, workflowId: string, filter: { status?: ExecutionStatus, mode?: string }, pq: PageQuery): Promise<Page<ExecutionRecord>> {
  const { where, params } = whereOf([['status = ?', filter.status], ['mode = ?', filter.mode]], [workflowId])
  return await page(q, `SELECT * FROM executions WHERE workflow_id = $1 AND ${where}`, params, pq, toRecord, 'desc')
}
