/**
 * Generic persistence for simple records (credentials, policies, clients,
 * profiles): one table each with `seq`, `id`, `version`, timestamps and the
 * record's own columns. Every change bumps `version`; `ifVersion` enforces
 * If-Match; writes bump the routing counter so gateways reload their snapshot.
 */
import { randomUUID } from 'node:crypto'
import { notFound, preconditionFailed } from '../../common/errors.js'
import type { BaseRecord, Page } from '../../common/types.js'
import { bumpConfigVersion, iso, json, page, type PageQuery } from './rows.js'
import type { Queryable } from './types.js'

export interface TableSpec<T extends BaseRecord> {
  table: string
  /** For messages: "Policy 'x' does not exist." */
  label: string
  columns: readonly string[]
  jsonColumns: ReadonlySet<string>
  map: (row: Record<string, unknown>) => Omit<T, keyof BaseRecord>
}

export function baseOf (r: Record<string, unknown>): BaseRecord {
  return { id: String(r.id), version: Number(r.version), created_at: iso(r.created_at), updated_at: iso(r.updated_at) }
}

export function records<T extends BaseRecord> (spec: TableSpec<T>) {
  const toRecord = (r: Record<string, unknown>): T => ({ ...baseOf(r), ...spec.map(r) }) as T
  const value = (col: string, v: unknown) => spec.jsonColumns.has(col) ? (v === undefined || v === null ? null : JSON.stringify(v)) : v
  const missing = (id: string) => notFound(`${spec.label} '${id}' does not exist.`)
  // Credentials feed triggers and workflow runs; the other records (policies, clients, profiles) feed access.
  const changeKind = spec.table === 'credentials' ? 'credential' : 'access'

  return {
    toRecord,
    async get (q: Queryable, id: string, where: Record<string, unknown> = {}): Promise<T> {
      const params: unknown[] = [id]
      const extra = Object.entries(where).map(([k, v]) => { params.push(v); return ` AND ${k} = $${params.length}` }).join('')
      const { rows } = await q.query(`SELECT * FROM ${spec.table} WHERE id = $1${extra}`, params)
      if (rows.length === 0) throw missing(id)
      return toRecord(rows[0])
    },
    async list (q: Queryable, pq: PageQuery, where: Record<string, unknown> = {}): Promise<Page<T>> {
      const params: unknown[] = []
      const cond = Object.entries(where).filter(([, v]) => v !== undefined).map(([k, v]) => { params.push(v); return `${k} = $${params.length}` })
      return await page(q, `SELECT * FROM ${spec.table} WHERE ${cond.length > 0 ? cond.join(' AND ') : 'true'}`, params, pq, toRecord)
    },
    async insert (q: Queryable, values: Record<string, unknown>): Promise<T> {
      const cols = spec.columns.filter(c => values[c] !== undefined)
      // An id chosen by the caller (to bind a sealed secret to its record before the insert), else a new one.
      const params = [typeof values.id === 'string' ? values.id : randomUUID(), ...cols.map(c => value(c, values[c]))]
      const { rows } = await q.query(
        `INSERT INTO ${spec.table} (id, ${cols.join(', ')}) VALUES ($1, ${cols.map((_, i) => `$${i + 2}`).join(', ')}) RETURNING *`, params)
      await bumpConfigVersion(q, changeKind, String(rows[0].id))
      return toRecord(rows[0])
    },
    async lock (q: Queryable, id: string, where: Record<string, unknown> = {}): Promise<T> {
      const params: unknown[] = [id]
      const extra = Object.entries(where).map(([k, v]) => { params.push(v); return ` AND ${k} = $${params.length}` }).join('')
      const { rows } = await q.query(`SELECT * FROM ${spec.table} WHERE id = $1${extra} FOR UPDATE`, params)
      if (rows.length === 0) throw missing(id)
      return toRecord(rows[0])
    },
    async update (q: Queryable, id: string, patch: Record<string, unknown>, ifVersion?: number, where: Record<string, unknown> = {}): Promise<{ before: T, after: T }> {
      const before = await this.lock(q, id, where)
      if (ifVersion !== undefined && ifVersion !== before.version) throw preconditionFailed()
      const cols = spec.columns.filter(c => patch[c] !== undefined)
      const params: unknown[] = [id, ...cols.map(c => value(c, patch[c]))]
      const sets = [...cols.map((c, i) => `${c} = $${i + 2}`), 'version = version + 1', 'updated_at = now()']
      const { rows } = await q.query(`UPDATE ${spec.table} SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params)
      await bumpConfigVersion(q, changeKind, id)
      return { before, after: toRecord(rows[0]) }
    },
    async remove (q: Queryable, id: string, ifVersion?: number, where: Record<string, unknown> = {}): Promise<T> {
      const current = await this.lock(q, id, where)
      if (ifVersion !== undefined && ifVersion !== current.version) throw preconditionFailed()
      await q.query(`DELETE FROM ${spec.table} WHERE id = $1`, [id])
      await bumpConfigVersion(q, changeKind, id)
      return current
    }
  }
}

export { json }
