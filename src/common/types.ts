/** Resource records as the management API returns them (CONVENTIONS.md). Pure types. */

export type HeaderSpec = { name: string, value: string } | { name: string, env: string }

export interface BaseRecord {
  id: string
  version: number
  created_at: string
  updated_at: string
}

export interface Collection extends BaseRecord {
  name: string
  description: string
  base_path: string
  /** Present when the upstream has exactly one target (the shorthand); absent otherwise. */
  upstream_url?: string
  /** The backend: always present on reads (one target for an upstream_url collection). */
  upstream: UpstreamSettings
  status: 'active' | 'disabled'
  headers: HeaderSpec[]
  auth_required: boolean
  /** Cross-origin browser access; null: no CORS headers, preflights handled like any OPTIONS. */
  cors: CorsSettings | null
}

/** A collection's CORS settings (origins exact, `https://*.example.org` patterns, or `*`). */
export interface CorsSettings {
  allow_origins: string[]
  allow_methods: string[]
  allow_headers: string[]
  expose_headers: string[]
  allow_credentials: boolean
  max_age_s: number | null
}

/** A proxy's response cache; answers are kept up to ttl_s unless the backend's Cache-Control says otherwise. */
export interface ProxyCacheSettings {
  ttl_s: number
  /** Request headers whose values make separate entries (besides the backend's own Vary). */
  vary: string[]
  /** On an authenticated collection: one entry for every client (false: one per client). */
  shared: boolean
}

export interface UpstreamTarget { url: string, weight: number }

export interface ActiveHealthCheck {
  path: string
  interval_ms: number
  timeout_ms: number
  healthy_threshold: number
  unhealthy_threshold: number
  expected_statuses: number[]
}

export interface PassiveHealthCheck { consecutive_failures: number, ejection_ms: number, max_ejection_percent: number }

/** A collection's backend: targets, how requests are spread, health, retries, circuit breaking. */
export interface UpstreamSettings {
  targets: UpstreamTarget[]
  balancing: 'round_robin' | 'least_connections' | 'consistent_hash'
  /** `ip`, `path`, `header:<name>` or `cookie:<name>` (consistent_hash only). */
  hash_on: string
  health_checks: { active: ActiveHealthCheck | null, passive: PassiveHealthCheck | null }
  retries: { attempts: number, budget_percent: number }
  /** Requests in flight per target address; null: no cap. */
  max_in_flight_per_target: number | null
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

export interface ProxyParameter {
  name: string
  location: 'path' | 'query'
  type: 'string' | 'integer' | 'number' | 'boolean'
  required: boolean
  default?: unknown
  description?: string
}

export interface WorkflowNode {
  id: string
  name: string
  type: string
  settings: Record<string, unknown>
  position?: { x: number, y: number }
}

export interface WorkflowEdge {
  id: string
  source: string
  target: string
  sourceHandle?: string | null
  targetHandle?: string | null
}

export interface WorkflowDefinition {
  nodes: WorkflowNode[]
  edges: WorkflowEdge[]
  runtime_settings?: {
    timeout_ms?: number
    save_on_success?: boolean
    save_on_error?: boolean
    /** The proxy's mailbox: runs in flight at once, and runs waiting beyond those. */
    max_concurrency?: number
    max_queue?: number
  }
}

export interface Proxy extends BaseRecord {
  collection_id: string
  name: string
  description: string
  methods: HttpMethod[]
  path: string
  target_path: string
  headers: HeaderSpec[]
  parameters: ProxyParameter[]
  request_schema: Record<string, unknown> | null
  response_schema: Record<string, unknown> | null
  streaming: boolean
  status: 'draft' | 'published'
  workflow_enabled: boolean
  workflow: WorkflowDefinition | null
  workflow_id: string
  timeout_ms: number | null
  /** Request body limit for this proxy; null means MAX_BODY_BYTES. */
  max_body_bytes: number | null
  /** Response cache; null: answers are never cached. */
  cache: ProxyCacheSettings | null
  /** Compress answers when the client accepts it (and COMPRESSION is on). */
  compression: boolean
  /** Relays `Upgrade: websocket` requests to the backend (ws/wss from the target URL). */
  websocket: boolean
  /** Add a missing query parameter's `default` to the forwarded query (default false: the query is kept as sent). */
  apply_parameter_defaults: boolean
}

export interface Page<T> {
  items: T[]
  next_cursor: string | null
}
