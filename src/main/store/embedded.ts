import fs from 'node:fs/promises'
import { PGlite } from '@electric-sql/pglite'
import type { Queryable, QueryResult, Store } from './types.js'

/**
 * The embedded PostgreSQL-compatible store (PGlite, PostgreSQL in WASM) in a
 * data directory: same schema and SQL as the server, no server needed.
 * PGlite is one connection; its transactions run exclusively.
 */
export async function createEmbeddedStore (dataDir: string): Promise<Store> {
  await fs.mkdir(dataDir, { recursive: true })
  const db = await PGlite.create(dataDir)
  let closed = false

  const wrap = (target: { query: PGlite['query'], exec: PGlite['exec'] }): Queryable => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const res = await target.query<T>(sql, params as any[])
      return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length }
    },
    async exec (sql: string) { await target.exec(sql) }
  })
  const top = wrap(db)

  return {
    kind: 'embedded',
    query: top.query,
    exec: top.exec,
    async tx (fn) { return await db.transaction(async tx => await fn(wrap(tx))) },
    async ping () {
      if (closed) throw new Error('the embedded store is closed')
      await db.query('SELECT 1')
    },
    async close () {
      if (closed) return
      closed = true
      await db.close()
    }
  }
}
