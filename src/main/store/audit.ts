/** The audit log: append-only rows of changes and refused requests, listed with filters. */
import { randomUUID } from 'node:crypto'
import type { Page } from '../../common/types.js'
import { iso, page, whereOf, type PageQuery } from './rows.js'
import type { Queryable } from './types.js'

/**
 * The surface a change came through; `assistant` rows are the built-in assistant's tool calls,
 * `config_file` rows the changes of loading CONFIG_FILE (at start and on SIGHUP).
 */
export type AuditSource = 'rest' | 'mcp' | 'assistant' | 'config_file'
export const AUDIT_SOURCES: readonly AuditSource[] = ['rest', 'mcp', 'assistant', 'config_file']

export interface AuditEntryInput {
  actor_sub: string | null
  source: AuditSource
  /** `create`, `update`, `delete`, `status_change`, `duplicate`, `import`, `rotate`, `denied`, … */
  action: string
  resource_kind: string | null
  resource_id: string | null
  method: string | null
  path: string
  status: number
  remote_addr: string | null
  /** The assistant's tool (source `assistant`). */
  tool?: string | null
  /** Default: now. */
  occurred_at?: Date
}

export interface AuditEntry extends Omit<AuditEntryInput, 'occurred_at' | 'tool'> { id: string, occurred_at: string, tool: string | null }

const COLS = ['id', 'occurred_at', 'actor_sub', 'source', 'action', 'resource_kind', 'resource_id', 'method', 'path', 'status', 'remote_addr', 'tool'] as const

const cap = (v: string | null, n: number): string | null => v === null ? null : v.slice(0, n)

/** Inserts entries in one statement. */
export async function insertAuditEntries (q: Queryable, entries: AuditEntryInput[]): Promise<void> {
  if (entries.length === 0) return
  const params: unknown[] = []
  const rows = entries.map(e => {
    const vals = [randomUUID(), (e.occurred_at ?? new Date()).toISOString(), cap(e.actor_sub, 512), e.source, cap(e.action, 64),
      cap(e.resource_kind, 64), cap(e.resource_id, 512), cap(e.method, 16), cap(e.path, 2048), e.status, cap(e.remote_addr, 64), cap(e.tool ?? null, 128)]
    return `(${vals.map(v => { params.push(v); return `$${params.length}` }).join(', ')})`
  })
  await q.query(`INSERT INTO audit_logs (${COLS.join(', ')}) VALUES ${rows.join(', ')}`, params)
}

export interface AuditFilter {
  actor_sub?: string
  resource_kind?: string
  resource_id?: string
  action?: string
  tool?: string
  source?: AuditSource
  /** ISO 8601; inclusive. */
  since?: string
  /** ISO 8601; exclusive. */
  until?: string
  /** `desc` (default): newest first. */
  order?: 'asc' | 'desc'
}

function toEntry (r: any): AuditEntry {
  return {
    id: r.id,
    occurred_at: iso(r.occurred_at),
    actor_sub: r.actor_sub,
    source: r.source,
    action: r.action,
    resource_kind: r.resource_kind,
    resource_id: r.resource_id,
    method: r.method,
    path: r.path,
    status: Number(r.status),
    remote_addr: r.remote_addr,
    tool: r.tool ?? null
  }
}

export async function listAuditEntries (q: Queryable, pq: PageQuery, f: AuditFilter): Promise<Page<AuditEntry>> {
  const { where, params } = whereOf([
    ['actor_sub = ?', f.actor_sub], ['resource_kind = ?', f.resource_kind], ['resource_id = ?', f.resource_id], ['action = ?', f.action], ['tool = ?', f.tool],
    ['source = ?', f.source], ['occurred_at >= ?', f.since], ['occurred_at < ?', f.until]
  ])
  return await page(q, `SELECT seq, ${COLS.join(', ')} FROM audit_logs WHERE ${where}`, params, pq, toEntry, f.order === 'asc' ? 'asc' : 'desc')
}
