/**
 * The collection's `upstream` object on writes: its JSON Schema (the routes', so the OpenAPI
 * document and the MCP tools show it), the rules beyond the schema, and how a write's
 * `upstream_url` and `upstream` become the stored object (common/upstream-settings.ts).
 */
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { Collection, UpstreamSettings } from '../../common/types.js'
import { mergeUpstream, type UpstreamInput } from '../../common/upstream-settings.js'
import { upstreamProblem } from './validation.js'

const int = (minimum: number, maximum: number, description: string) => ({ type: 'integer', minimum, maximum, description })

export const MAX_TARGETS = 64

export const upstreamSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'The backend: targets and how requests are spread over them. Fields left out keep their current value (defaults on create).',
  properties: {
    targets: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_TARGETS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: {
          url: { type: 'string', minLength: 1, maxLength: 2048, description: 'Backend base URL (http:// or https://); a host name resolving to several addresses is balanced across them.' },
          weight: int(1, 1000, 'Share of requests relative to the other targets (default 100).')
        }
      }
    },
    balancing: { type: 'string', enum: ['round_robin', 'least_connections', 'consistent_hash'], description: 'round_robin (smooth weighted, default), least_connections, consistent_hash.' },
    hash_on: { type: 'string', maxLength: 300, pattern: '^(ip|path|header:[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,256}|cookie:[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,256})$', description: 'consistent_hash key: ip, path, header:<name> or cookie:<name> (default ip).' },
    health_checks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        active: {
          type: ['object', 'null'],
          additionalProperties: false,
          description: 'Periodic probes of every target address (null: off, the default).',
          properties: {
            path: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^/[^\\s#]*$', description: 'Path probed with GET (default /).' },
            interval_ms: int(100, 3_600_000, 'Time between probes (default 10000).'),
            timeout_ms: int(50, 60_000, 'A probe without an answer in this time fails (default 2000).'),
            healthy_threshold: int(1, 100, 'Successes in a row that make an unhealthy target healthy (default 2).'),
            unhealthy_threshold: int(1, 100, 'Failures in a row that make a healthy target unhealthy (default 3).'),
            expected_statuses: { type: 'array', minItems: 1, maxItems: 100, items: int(100, 599, 'Status'), description: 'Statuses that count as success (default 200, 201, 202, 204, 301, 302, 304).' }
          }
        },
        passive: {
          type: ['object', 'null'],
          additionalProperties: false,
          description: 'Ejection of a target address after consecutive failures seen on real traffic (null: off).',
          properties: {
            consecutive_failures: int(1, 1000, 'Failures in a row (no connection, reset, timeout, 502/503/504) that eject (default 5).'),
            ejection_ms: int(100, 3_600_000, 'First ejection time; each further ejection lasts one more such period (default 30000).'),
            max_ejection_percent: int(0, 100, 'Never eject more than this share of addresses (default 50).')
          }
        }
      }
    },
    retries: {
      type: 'object',
      additionalProperties: false,
      properties: {
        attempts: int(0, 10, 'Retries of idempotent requests answered 502/503/504 or cut after sending (default 0).'),
        budget_percent: int(0, 100, 'Retries allowed as a share of recent requests, at least 3 per 10 s (default 20).')
      }
    },
    max_in_flight_per_target: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000, description: 'Cap on requests in flight per target address; past it another target, or 503 with Retry-After (null: no cap).' }
  }
}

export interface UpstreamBody { upstream_url?: unknown, upstream?: unknown }

/** Rules beyond the schema: URLs, duplicates, the shorthand agreeing with the targets. */
export function upstreamProblems (body: UpstreamBody): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const up = body.upstream as UpstreamInput | undefined
  const targets = typeof up === 'object' && up !== null && Array.isArray(up.targets) ? up.targets : null
  if (targets !== null) {
    const seen = new Set<string>()
    targets.forEach((t, i) => {
      if (typeof t?.url !== 'string') return
      const p = upstreamProblem(t.url)
      if (p !== null) details.push({ field: `upstream.targets[${i}].url`, message: p })
      else if (seen.has(t.url)) details.push({ field: `upstream.targets[${i}].url`, message: 'repeats another target; raise its weight instead' })
      seen.add(t.url)
    })
    if (typeof body.upstream_url === 'string' && (targets.length !== 1 || targets[0]?.url !== body.upstream_url)) {
      details.push({ field: 'upstream_url', message: 'disagrees with upstream.targets; send one of them (upstream_url is the shorthand for one target)' })
    }
  }
  return details
}

/** A create without a backend: neither upstream_url nor upstream.targets. */
export function missingUpstream (body: UpstreamBody): ErrorDetail[] {
  const up = body.upstream as UpstreamInput | undefined
  return body.upstream_url === undefined && (typeof up !== 'object' || up === null || up.targets === undefined)
    ? [{ field: 'upstream_url', message: 'is required unless upstream.targets is given' }]
    : []
}

/** The create's upstream; 400 when it has neither upstream_url nor upstream.targets. */
export function upstreamForCreate (body: UpstreamBody): UpstreamSettings {
  const missing = missingUpstream(body)
  if (missing.length > 0) throw validationFailed('The collection needs a backend: give upstream_url or upstream.targets.', missing)
  return mergeUpstream(null, body.upstream as UpstreamInput | undefined, body.upstream_url as string | undefined)
}

/** The update's upstream, or undefined when the write does not touch it. */
export function upstreamForUpdate (current: Collection, body: UpstreamBody): UpstreamSettings | undefined {
  if (body.upstream === undefined && body.upstream_url === undefined) return undefined
  return mergeUpstream(current.upstream, body.upstream as UpstreamInput | undefined, body.upstream_url as string | undefined)
}
