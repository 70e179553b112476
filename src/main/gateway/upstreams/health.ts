/**
 * Health of a set's endpoints, one view per process (every instance judges for itself):
 *
 *   healthy ──(consecutive_failures on real traffic, under max_ejection_percent)──> ejected
 *   ejected ──(ejection time over: ejection_ms × times ejected, at most 10×)──────> healthy
 *   healthy ──(unhealthy_threshold failed probes)──> unhealthy ──(healthy_threshold good probes)──> healthy
 *
 * A failure is no connection, a reset or cut answer, a timeout, or a 502/503/504 answer.
 * Each change of state is logged once, at warn going down and info coming back.
 *
 * With gateway threads (GATEWAY_THREADS > 1) the main thread judges for the process: a worker
 * thread reports its passive failures (and a success after a failure it reported) to it and runs
 * no probes; every change of state the main thread decides is applied by every thread (HealthShare).
 */
import type { PassiveHealthCheck, ActiveHealthCheck } from '../../../common/types.js'
import type { Logger } from '../../logger.js'
import type { Endpoint, EndpointState } from './endpoint.js'

const MAX_EJECTION_FACTOR = 10

export interface HealthScope {
  collectionId: string
  endpoints: () => readonly Endpoint[]
  passive: PassiveHealthCheck | null
  active: ActiveHealthCheck | null
  logger: Logger
  /** Timers to clear when the set is dropped. */
  timers: Set<NodeJS.Timeout>
  /** How this thread takes part in the process's one view; null: it judges alone. */
  share: HealthShare | null
}

/** A passive outcome a worker thread saw: collection id, target URL, address, success, reason. */
export type HealthReport = [collectionId: string, url: string, address: string, ok: boolean, reason: string | null]
/** A change of state the main thread decided: collection id, target URL, address, state, since, last error. */
export type HealthChange = [collectionId: string, url: string, address: string, state: EndpointState, since: string, lastError: string | null]

export interface HealthShare {
  /** A worker thread: its passive outcomes go to the main thread, which judges; it probes nothing. */
  report?: (r: HealthReport) => void
  /** The main thread: each change of state, for every other thread. */
  changed?: (c: HealthChange) => void
}

export function setState (scope: HealthScope, e: Endpoint, state: EndpointState, reason: string | null): void {
  if (e.state === state) return
  const from = e.state
  e.state = state
  e.since = new Date().toISOString()
  if (reason !== null) e.lastError = reason
  scope.share?.changed?.([scope.collectionId, e.target.url, e.address, state, e.since, e.lastError])
  const data = { collection_id: scope.collectionId, target: e.target.url, address: e.address, from, to: state, reason }
  if (state === 'healthy') scope.logger.info(data, 'upstream target address is healthy again')
  else scope.logger.warn(data, `upstream target address is ${state}`)
}

/** A request to `e` succeeded (any answer but 502/503/504). */
export function passiveSuccess (scope: HealthScope, e: Endpoint): void {
  if (e.failures === 0) return
  e.failures = 0
  // A worker thread tells only of a success that ends failures it reported: nothing per request otherwise.
  scope.share?.report?.([scope.collectionId, e.target.url, e.address, true, null])
}

/** A request to `e` failed; ejects it after enough failures in a row unless too many are out already. */
export function passiveFailure (scope: HealthScope, e: Endpoint, reason: string, now: number): void {
  e.lastError = reason
  const p = scope.passive
  const report = scope.share?.report
  if (report !== undefined) {
    if (p === null || e.state === 'ejected') return
    e.failures = 1
    report([scope.collectionId, e.target.url, e.address, false, reason])
    return
  }
  if (p === null || e.ejectedUntil > now) return
  if (++e.failures < p.consecutive_failures) return
  const all = scope.endpoints()
  let out = 0
  for (const o of all) if (o.ejectedUntil > now) out++
  if (out + 1 > Math.floor(all.length * p.max_ejection_percent / 100)) return
  // Ejections are forgotten one per ejection period spent back in service.
  if (e.lastEjectionEnd > 0) e.ejections = Math.max(0, e.ejections - Math.floor((now - e.lastEjectionEnd) / p.ejection_ms))
  e.ejections++
  const ms = p.ejection_ms * Math.min(e.ejections, MAX_EJECTION_FACTOR)
  e.ejectedUntil = now + ms
  e.failures = 0
  setState(scope, e, 'ejected', `${reason} (${p.consecutive_failures} failures in a row; out for ${ms} ms)`)
  armReturn(scope, e, now)
}

/** Brings an ejected endpoint back when its time is over (also re-armed when a new set takes it over). */
export function armReturn (scope: HealthScope, e: Endpoint, now: number): void {
  const timer = setTimeout(() => {
    scope.timers.delete(timer)
    e.ejectedUntil = 0
    e.lastEjectionEnd = Date.now()
    setState(scope, e, e.probeHealthy === false ? 'unhealthy' : 'healthy', null)
  }, Math.max(0, e.ejectedUntil - now))
  timer.unref()
  scope.timers.add(timer)
}

/** One active probe's result. */
export function probeResult (scope: HealthScope, e: Endpoint, ok: boolean, reason: string | null): void {
  const a = scope.active!
  if (!ok) e.lastError = reason
  // A new address starts healthy; a streak counts results in a row of the kind that would change the state.
  if (ok === (e.probeHealthy ?? true)) { e.probeStreak = 0; return }
  e.probeStreak++
  if (e.probeStreak < (ok ? a.healthy_threshold : a.unhealthy_threshold)) return
  e.probeHealthy = ok
  e.probeStreak = 0
  mark(scope, e, reason)
}

function mark (scope: HealthScope, e: Endpoint, reason: string | null): void {
  if (e.ejectedUntil > Date.now()) return
  setState(scope, e, e.probeHealthy === false ? 'unhealthy' : 'healthy', reason)
}
