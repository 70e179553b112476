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
  close(): Promise<void>
}

/** SQLSTATE of a unique violation, the same on both implementations. */
export const UNIQUE_VIOLATION = '23505'

export function isUniqueViolation (err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION
}
