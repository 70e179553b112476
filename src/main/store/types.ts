/** The store contract: one interface, two implementations (PostgreSQL, embedded PGlite), same SQL. */

export interface QueryResult<T> { rows: T[], rowCount: number }

export interface Queryable {
  query<T = any>(sql: string, params?: unknown[]): Promise<QueryResult<T>>
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>
}

export interface Store extends Queryable {
  readonly kind: 'postgres' | 'embedded'
  /** Every write goes through here: a failed write changes nothing. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>
  /** Throws when the database cannot be reached (used by /readyz). */
  ping(): Promise<void>
  /**
   * `COPY … FROM STDIN` with `text` (COPY's text format) as its data, in one statement: all rows
   * or none. Returns the rows copied. PostgreSQL only; the embedded store has none.
   */
  copyFrom?(sql: string, text: string): Promise<number>
  close(): Promise<void>
}

/** SQLSTATE of a unique violation, the same on both implementations. */
export const UNIQUE_VIOLATION = '23505'

export function isUniqueViolation (err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '3D000', '08000', '08003', '08006', '08001', '08004', '53300'])

/** True when an error means the database cannot be reached right now (not a bad query). */
export function isDatabaseUnavailable (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as { code?: string, message?: string }
  if (e.code !== undefined && UNAVAILABLE_CODES.has(e.code)) return true
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|the embedded store is closed|PGlite is closed/i.test(e.message ?? '')
}
