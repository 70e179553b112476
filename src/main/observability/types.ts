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
}
