/** The audit log: append-only rows of changes and refused requests, listed with filters. */
import { randomUUID } from 'node:crypto'
import type { Page } from '../../common/types.js'
import { decodeCursor, encodeCursor, iso, type PageQuery } from './rows.js'
import type { Queryable } from './types.js'

export interface AuditEntryInput {
  actor_sub: string | null
  source: 'rest' | 'mcp'
  /** `create`, `update`, `delete`, `status_change`, `duplicate`, `import`, `rotate`, `denied`, … */
  action: string
  resource_kind: string | null
  resource_id: string | null
  method: string | null
  path: string
  status: number
  remote_addr: string | null
  /** Default: now. */
  occurred_at?: Date
}

export interface AuditEntry extends Omit<AuditEntryInput, 'occurred_at'> { id: string, occurred_at: string }

const COLS = ['id', 'occurred_at', 'actor_sub', 'source', 'action', 'resource_kind', 'resource_id', 'method', 'path', 'status', 'remote_addr'] as const

const cap = (v: string | null, n: number): string | null => v === null ? null : v.slice(0, n)

/** Inserts entries in one statement. */
export async function insertAuditEntries (q: Queryable, entries: AuditEntryInput[]): Promise<void> {
  if (entries.length === 0) return
  const params: unknown[] = []
  const rows = entries.map(e => {
    const vals = [randomUUID(), (e.occurred_at ?? new Date()).toISOString(), cap(e.actor_sub, 512), e.source, cap(e.action, 64),
      cap(e.resource_kind, 64), cap(e.resource_id, 512), cap(e.method, 16), cap(e.path, 2048), e.status, cap(e.remote_addr, 64)]
    return `(${vals.map(v => { params.push(v); return `$${params.length}` }).join(', ')})`
  })
  await q.query(`INSERT INTO audit_logs (${COLS.join(', ')}) VALUES ${rows.join(', ')}`, params)
}

export interface AuditFilter {
  actor_sub?: string
  resource_kind?: string
  resource_id?: string
  action?: string
  source?: 'rest' | 'mcp'
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
    remote_addr: r.remote_addr
  }
}

/** Keyset paging on `seq` in either direction (the shared helper pages oldest first only). */
export async function listAuditEntries (q: Queryable, pq: PageQuery, f: AuditFilter): Promise<Page<AuditEntry>> {
  const where: string[] = []
  const params: unknown[] = []
  const add = (sql: string, v: unknown) => { if (v !== undefined) { params.push(v); where.push(sql.replace('?', `$${params.length}`)) } }
  add('actor_sub = ?', f.actor_sub)
  add('resource_kind = ?', f.resource_kind)
  add('resource_id = ?', f.resource_id)
  add('action = ?', f.action)
  add('source = ?', f.source)
  add('occurred_at >= ?', f.since)
  add('occurred_at < ?', f.until)
  const desc = f.order !== 'asc'
  const after = decodeCursor(pq.cursor)
  if (after > 0) add(desc ? 'seq < ?' : 'seq > ?', after)
  params.push(pq.limit + 1)
  const { rows } = await q.query(
    `SELECT seq, ${COLS.join(', ')} FROM audit_logs WHERE ${where.length > 0 ? where.join(' AND ') : 'true'}
     ORDER BY seq ${desc ? 'DESC' : 'ASC'} LIMIT $${params.length}`, params)
  const more = rows.length > pq.limit
  const items = rows.slice(0, pq.limit)
  return { items: items.map(toEntry), next_cursor: more ? encodeCursor(Number(items[items.length - 1].seq)) : null }
}
