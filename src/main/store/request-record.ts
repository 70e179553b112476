/** One gateway request, as the request log and the metrics see it. */
export interface RequestRecord {
  time: number // epoch ms
  request_id: string
  collection_id: string | null
  proxy_id: string | null
  client_id: string | null
  profile_id: string | null
  method: string
  path: string
  status: number
  duration_ms: number
  upstream_ms: number | null
  bytes_in: number
  bytes_out: number
  /** Answered by the gateway itself (auth, limits, no route, validation, backend failure), not by the backend or a workflow. */
  refused?: boolean
  /** The request's trace when it was sampled (exported), else null. */
  trace_id?: string | null
}

/** The longest path the request log keeps, in characters (Unicode code points). */
export const MAX_LOGGED_PATH = 2048

/**
 * The path as the request log keeps it: its first 2,048 characters, counted as PostgreSQL's
 * left() counts them (a surrogate pair is one character), so both stores keep the same path.
 */
export function loggedPath (path: string): string {
  // Up to 2,048 UTF-16 units there cannot be more than 2,048 characters.
  if (path.length <= MAX_LOGGED_PATH) return path
  let units = 0
  let chars = 0
  for (const ch of path) {
    if (chars === MAX_LOGGED_PATH) return path.slice(0, units)
    units += ch.length
    chars++
  }
  return path
}
