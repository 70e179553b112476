/**
 * A collection's `upstream` object: its defaults, and how a write (the `upstream_url` shorthand,
 * a whole or partial `upstream`) combines with what is stored. Pure: the store, the management
 * API and the gateway read the same rules.
 */
import type { ActiveHealthCheck, PassiveHealthCheck, UpstreamSettings, UpstreamTarget } from './types.js'

export const DEFAULT_WEIGHT = 100

export const DEFAULT_PASSIVE: Readonly<PassiveHealthCheck> = Object.freeze({ consecutive_failures: 5, ejection_ms: 30_000, max_ejection_percent: 50 })

export const DEFAULT_ACTIVE: Readonly<Omit<ActiveHealthCheck, 'path'>> = Object.freeze({
  interval_ms: 10_000, timeout_ms: 2_000, healthy_threshold: 2, unhealthy_threshold: 3, expected_statuses: [200, 201, 202, 204, 301, 302, 304]
})

/** What an upstream given as targets alone means. */
export function defaultUpstream (targets: UpstreamTarget[]): UpstreamSettings {
  return {
    targets,
    balancing: 'round_robin',
    hash_on: 'ip',
    health_checks: { active: null, passive: { ...DEFAULT_PASSIVE } },
    retries: { attempts: 0, budget_percent: 20 },
    max_in_flight_per_target: null
  }
}

/** A write's `upstream` as the API accepts it: every field optional. */
export interface UpstreamInput {
  targets?: Array<{ url: string, weight?: number }>
  balancing?: UpstreamSettings['balancing']
  hash_on?: string
  health_checks?: { active?: Partial<ActiveHealthCheck> | null, passive?: Partial<PassiveHealthCheck> | null }
  retries?: Partial<UpstreamSettings['retries']>
  max_in_flight_per_target?: number | null
}

/**
 * The upstream after a write: fields given replace the current ones (a partial `upstream` keeps
 * the rest), `upstream_url` replaces the targets with that one URL. The caller has checked that
 * the two agree when both are given.
 */
export function mergeUpstream (current: UpstreamSettings | null, input: UpstreamInput | undefined, upstreamUrl: string | undefined): UpstreamSettings {
  const base = current ?? defaultUpstream([])
  const i = input ?? {}
  const targets = i.targets !== undefined
    ? i.targets.map(t => ({ url: t.url, weight: t.weight ?? DEFAULT_WEIGHT }))
    : upstreamUrl !== undefined ? [{ url: upstreamUrl, weight: (base.targets.length === 1 ? base.targets[0]?.weight : undefined) ?? DEFAULT_WEIGHT }] : base.targets
  const hc = i.health_checks
  return {
    targets,
    balancing: i.balancing ?? base.balancing,
    hash_on: i.hash_on ?? base.hash_on,
    health_checks: {
      active: hc?.active === undefined ? base.health_checks.active : hc.active === null ? null : { ...DEFAULT_ACTIVE, path: '/', ...base.health_checks.active, ...hc.active } as ActiveHealthCheck,
      passive: hc?.passive === undefined ? base.health_checks.passive : hc.passive === null ? null : { ...DEFAULT_PASSIVE, ...base.health_checks.passive, ...hc.passive }
    },
    retries: { ...base.retries, ...i.retries },
    max_in_flight_per_target: i.max_in_flight_per_target === undefined ? base.max_in_flight_per_target : i.max_in_flight_per_target
  }
}

/** The stored column (null for rows written before upstreams existed) read with the shorthand URL. */
export function storedUpstream (stored: UpstreamSettings | null, upstreamUrl: string): UpstreamSettings {
  if (stored === null) return defaultUpstream([{ url: upstreamUrl, weight: DEFAULT_WEIGHT }])
  // Fields added later read as their defaults.
  return mergeUpstream(defaultUpstream(stored.targets), stored, undefined)
}
