/** Row <-> record helpers shared by the repositories. */
import { badRequest } from '../../common/errors.js'
import type { Page } from '../../common/types.js'
import type { Queryable } from './types.js'

export const iso = (v: unknown): string => v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString()

/** jsonb comes back parsed from both drivers; a string is parsed defensively. */
export const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T

export const encodeCursor = (seq: number): string => Buffer.from(`s:${seq}`).toString('base64url')

export function decodeCursor (cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0
  const m = /^s:(\d{1,10})$/.exec(Buffer.from(cursor, 'base64url').toString())
  if (m === null) throw badRequest('The cursor is not valid; use the next_cursor of a previous page.', [{ field: 'cursor', message: 'is not a valid cursor' }])
  return Number(m[1])
}

export interface PageQuery { limit: number, cursor?: string }

/**
 * Keyset paging on the table's `seq` column, oldest first (or newest first for history
 * views); the cursor is the last seq seen. `sql` ends inside a WHERE clause.
 */
export async function page<R extends { seq: number }, T> (
  q: Queryable, sql: string, params: unknown[], pq: PageQuery, map: (row: R) => T, order: 'asc' | 'desc' = 'asc'
): Promise<Page<T>> {
  const last = decodeCursor(pq.cursor)
  const args = last > 0 ? [...params, last] : [...params]
  const bound = last > 0 ? ` AND seq ${order === 'desc' ? '<' : '>'} $${args.length}` : ''
  const { rows } = await q.query<R>(`${sql}${bound} ORDER BY seq ${order === 'desc' ? 'DESC' : 'ASC'} LIMIT $${args.length + 1}`, [...args, pq.limit + 1])
  const more = rows.length > pq.limit
  const items = rows.slice(0, pq.limit)
  // more: items is a full page, so it has a last element.
  return { items: items.map(map), next_cursor: more ? encodeCursor(Number(items[items.length - 1]!.seq)) : null }
}

/**
 * A WHERE clause from optional filters: each `[condition with one ?, value]` counts only
 * when its value is given; placeholders are numbered after `params` already there.
 */
export function whereOf (conds: Array<[string, unknown]>, params: unknown[] = []): { where: string, params: unknown[] } {
  const parts: string[] = []
  for (const [sql, v] of conds) {
    if (v === undefined) continue
    params.push(v)
    parts.push(sql.replace('?', `$${params.length}`))
  }
  return { where: parts.length > 0 ? parts.join(' AND ') : 'true', params }
}

/** What a configuration change touched (see migration 009). */
export type ConfigChangeKind = 'collection' | 'proxy' | 'access' | 'credential'

/** Changes kept behind the newest: an instance further behind reloads everything. */
export const CONFIG_CHANGES_KEPT = 5000

/**
 * Bumps the configuration version and records what changed, in the caller's transaction. The row
 * lock on config_state orders concurrent writers, so versions become visible in commit order.
 */
export async function bumpConfigVersion (q: Queryable, kind: ConfigChangeKind, ref: string): Promise<void> {
  const { rows } = await q.query<{ version: number }>('UPDATE config_state SET version = version + 1 WHERE id = 1 RETURNING version')
  // Migration 1 inserts the one config_state row; nothing deletes it.
  if (rows[0] === undefined) throw new Error('config_state has no row: the database was not migrated')
  const version = Number(rows[0].version)
  await q.query('INSERT INTO config_changes (version, kind, ref) VALUES ($1, $2, $3)', [version, kind, ref])
  if (version % 500 === 0) await q.query('DELETE FROM config_changes WHERE version <= $1', [version - CONFIG_CHANGES_KEPT])
}

export async function configVersion (q: Queryable): Promise<number> {
  const { rows } = await q.query<{ version: number }>('SELECT version FROM config_state WHERE id = 1')
  return Number(rows[0]?.version ?? 0)
}

/**
 * Runs `fn` in one transaction that reads one snapshot (REPEATABLE READ): every read inside it
 * sees the same state, e.g. a configuration file and the version it is at.
 */
export async function snapshotRead<T> (store: { tx: <R>(fn: (q: Queryable) => Promise<R>) => Promise<R> }, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return await store.tx(async q => {
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
    return await fn(q)
  })
}
