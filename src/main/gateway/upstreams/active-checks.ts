/**
 * Active health checks: every interval, a GET of the check path to each endpoint (its address,
 * with the target's Host), a fresh connection each time so a probe sees what a new request would.
 * The next probe is scheduled when the previous one ends, so slow probes never pile up.
 */
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import type { Endpoint } from './endpoint.js'
import { probeResult, type HealthScope } from './health.js'

/** Starts probing `e` until `alive()` turns false. */
export function startProbing (scope: HealthScope, e: Endpoint, alive: () => boolean): void {
  const a = scope.active
  // A worker thread's view follows the main thread's probes.
  if (a === null || scope.share?.report !== undefined) return
  const schedule = (): void => {
    if (!alive()) return
    const timer = setTimeout(() => {
      scope.timers.delete(timer)
      if (!alive()) return
      probe(e, a.path, a.timeout_ms, a.expected_statuses, (ok, reason) => {
        if (!alive()) return
        probeResult(scope, e, ok, reason)
        schedule()
      })
    }, a.interval_ms)
    timer.unref()
    scope.timers.add(timer)
  }
  schedule()
}

function probe (e: Endpoint, path: string, timeoutMs: number, expected: readonly number[], done: (ok: boolean, reason: string | null) => void): void {
  let settled = false
  const finish = (ok: boolean, reason: string | null): void => { if (!settled) { settled = true; done(ok, reason) } }
  const t = e.target
  const req = (t.secure ? https : http).request({
    host: e.address, port: t.port, path, method: 'GET', agent: false, timeout: timeoutMs,
    headers: { host: t.hostHeader, 'user-agent': 'gatehouse-health-check', connection: 'close' },
    ...(t.secure && net.isIP(t.hostname) === 0 ? { servername: t.hostname } : {})
  }, res => {
    res.resume()
    const ok = expected.includes(res.statusCode ?? 0)
    finish(ok, ok ? null : `health check ${path} answered ${res.statusCode ?? 0}`)
  })
  req.on('timeout', () => { req.destroy(new Error(`health check ${path} got no answer within ${timeoutMs} ms`)) })
  req.on('error', err => finish(false, err.message))
  req.end()
}
