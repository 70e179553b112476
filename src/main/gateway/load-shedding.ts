/**
 * Load shedding: when the gateway is past what it can serve well, new requests get a cheap 503
 * with Retry-After instead of joining a queue that makes every answer slow. Two signals:
 *   - requests in flight over SHED_MAX_IN_FLIGHT;
 *   - the event loop's delay (the median over the last half second, from perf_hooks) over
 *     SHED_EVENT_LOOP_DELAY_MS: the main loop is saturated, every request waits behind others.
 *     The median, not a high percentile: one long task (a big import, a compile) is not overload;
 *     a loop that is late on most of its turns is.
 * Each check is a comparison per request; the delay is sampled on a timer.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'

export interface LoadShedder {
  /** Why a new request should be shed now, or null. */
  reason (inFlight: number): string | null
  readonly shed: { in_flight: number, event_loop_delay: number }
  close (): void
}

const SAMPLE_MS = 500

export function createLoadShedder (o: { maxInFlight: number, maxDelayMs: number }): LoadShedder {
  let overloaded = false
  let delayMs = 0
  const shed = { in_flight: 0, event_loop_delay: 0 }
  let monitor: ReturnType<typeof monitorEventLoopDelay> | null = null
  let timer: NodeJS.Timeout | null = null
  if (o.maxDelayMs > 0) {
    monitor = monitorEventLoopDelay({ resolution: 10 })
    monitor.enable()
    timer = setInterval(() => {
      delayMs = monitor!.percentile(50) / 1e6
      overloaded = delayMs > o.maxDelayMs
      monitor!.reset()
    }, SAMPLE_MS)
    timer.unref()
  }
  return {
    shed,
    reason (inFlight) {
      if (o.maxInFlight > 0 && inFlight > o.maxInFlight) { shed.in_flight++; return `${inFlight - 1} requests are already in flight (SHED_MAX_IN_FLIGHT=${o.maxInFlight})` }
      if (overloaded) { shed.event_loop_delay++; return `the event loop is delayed by ${Math.round(delayMs)} ms (SHED_EVENT_LOOP_DELAY_MS=${o.maxDelayMs})` }
      return null
    },
    close () {
      if (timer !== null) clearInterval(timer)
      monitor?.disable()
    }
  }
}
