import type pgTypes from 'pg'
import { lazyRequire } from '../lazy-require.js'
import type { Logger } from '../logger.js'
import type { Queryable, QueryResult, Store } from './types.js'

const loadPg = lazyRequire<typeof pgTypes>('pg')
const loadCopyStreams = lazyRequire<typeof import('pg-copy-streams')>('pg-copy-streams')

export interface PostgresOptions { url: string, queryTimeoutMs: number, max?: number }

/** PostgreSQL through a pg Pool. A server restart or fault surfaces as errors to callers, never a crash. */
export function createPostgresStore (opts: PostgresOptions, logger: Logger): Store {
  const pg = loadPg()
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    // A frozen server must not hang a request forever.
    query_timeout: opts.queryTimeoutMs,
    statement_timeout: opts.queryTimeoutMs,
    connectionTimeoutMillis: Math.min(opts.queryTimeoutMs, 5000),
    idleTimeoutMillis: 30_000,
    application_name: 'gatehouse'
  })
  let warned = false
  const lost = (err: Error) => {
    if (!warned) logger.warn({ err: err.message }, 'PostgreSQL connection lost; queries will fail until it returns')
    warned = true
  }
  // Without this listener an idle client's error (server restart) would crash the process.
  pool.on('error', lost)
  pool.on('connect', () => { warned = false })

  const run = async <T>(client: pgTypes.Pool | pgTypes.PoolClient, sql: string, params?: unknown[]): Promise<QueryResult<T>> => {
    const res = await client.query(sql, params as unknown[])
    return { rows: res.rows as T[], rowCount: res.rowCount ?? 0 }
  }

  /**
   * A client of its own for `fn`. A checked-out client has no pool listener: a server crash while
   * it is out would be an unhandled 'error' event and end the process, so it is noted here (the
   * next query fails). A client that broke, or that `fn` discards, is closed instead of reused.
   */
  const checkedOut = async <T>(fn: (client: pgTypes.PoolClient, discard: (err: Error) => void) => Promise<T>): Promise<T> => {
    const client = await pool.connect()
    let broken: Error | undefined
    const onError = (err: Error) => { broken = err; lost(err) }
    client.on('error', onError)
    try {
      return await fn(client, err => { broken ??= err })
    } finally {
      client.off('error', onError)
      client.release(broken)
    }
  }

  return {
    kind: 'postgres',
    query: async (sql, params) => await run(pool, sql, params),
    exec: async sql => { await pool.query(sql) },
    async tx (fn) {
      return await checkedOut(async (client, discard) => {
        try {
          await client.query('BEGIN')
          const q: Queryable = {
            query: async (sql, params) => await run(client, sql, params),
            exec: async sql => { await client.query(sql) }
          }
          const result = await fn(q)
          await client.query('COMMIT')
          return result
        } catch (err) {
          // A connection whose rollback failed is discarded rather than reused.
          await client.query('ROLLBACK').catch((e: Error) => { discard(e) })
          throw err
        }
      })
    },
    async copyFrom (sql, text) {
      return await checkedOut(async (client, discard) => {
        try {
          // The pool's query_timeout covers the stream too (pg arms it for any submitted query).
          const copy = client.query(loadCopyStreams().from(sql))
          await new Promise<void>((resolve, reject) => {
            copy.on('finish', resolve)
            copy.on('error', reject)
            copy.end(text)
          })
          return copy.rowCount
        } catch (err) {
          // A connection whose COPY failed part-way may still be in it: it is discarded, not reused.
          discard(err as Error)
          throw err
        }
      })
    },
    async ping () { await pool.query('SELECT 1') },
    async close () { await pool.end() }
  }
}
