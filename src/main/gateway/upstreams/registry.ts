/**
 * Every collection's compiled upstream, by collection id. The route table asks for a collection's
 * set when it compiles the collection (never per request); an unchanged upstream keeps its set,
 * a changed one gets a new set that takes over the endpoints it keeps.
 *
 * A collection whose upstream is one target at an IP address, with no active checks, no cap and
 * no retries, gets no set: its routes forward straight to that address's pool (forward.ts), as
 * fast as before upstreams existed. Balancing, ejection and retries to "another target" have
 * nothing to choose from there.
 */
import net from 'node:net'
import type { Collection, UpstreamSettings } from '../../../common/types.js'
import { passiveFailure, passiveSuccess, type HealthChange, type HealthReport } from './health.js'
import { UpstreamSet, type SetOptions, type TargetHealth } from './upstream-set.js'

export class UpstreamRegistry {
  private readonly sets = new Map<string, { key: string, set: UpstreamSet }>()
  /** A worker thread: addresses the main thread holds out, by `collection|url|address`. */
  private readonly held = new Map<string, HealthChange>()
  private readonly opts: SetOptions

  constructor (opts: SetOptions) {
    this.opts = opts.share?.report === undefined ? opts : { ...opts, known: (id, url, address) => this.held.get(`${id}|${url}|${address}`) }
  }

  /** The collection's set, or null when it forwards directly. */
  get (c: Collection): UpstreamSet | null {
    const settings = c.upstream
    const cur = this.sets.get(c.id)
    if (settings === undefined || direct(settings)) { this.drop(c.id); return null }
    const key = JSON.stringify(settings)
    if (cur !== undefined && cur.key === key) { cur.set.collection = c; return cur.set }
    let set: UpstreamSet
    try { set = new UpstreamSet(c, settings, this.opts, cur?.set ?? null) } catch (err) {
      // Written before validation knew this shape: its routes forward to the first target as they did.
      this.opts.logger.warn({ collection_id: c.id, err: (err as Error).message }, 'collection upstream is not usable; its first target is served directly')
      this.drop(c.id)
      return null
    }
    this.sets.set(c.id, { key, set })
    return set
  }

  drop (id: string): void {
    const cur = this.sets.get(id)
    if (cur === undefined) return
    this.sets.delete(id)
    cur.set.close()
  }

  /** This process's view of the collection's targets; null when it has no set (direct forwarding). */
  health (id: string): TargetHealth[] | null { return this.sets.get(id)?.set.health() ?? null }

  /** The main thread: passive outcomes a worker thread saw, judged as if seen here. */
  report (reports: readonly HealthReport[]): void {
    const now = Date.now()
    for (const [id, url, address, ok, reason] of reports) {
      const set = this.sets.get(id)?.set
      const e = set?.endpoint(url, address)
      if (set === undefined || e === undefined) continue
      if (ok) passiveSuccess(set.scope, e); else passiveFailure(set.scope, e, reason ?? 'failed', now)
    }
  }

  /** The main thread: every address not healthy now (what a starting thread is told). */
  states (): HealthChange[] {
    const out: HealthChange[] = []
    for (const { set } of this.sets.values()) {
      for (const e of set.endpoints) if (e.state !== 'healthy') out.push([set.collection.id, e.target.url, e.address, e.state, e.since, e.lastError])
    }
    return out
  }

  /** A worker thread: the main thread's changes of state, applied to this thread's endpoints. */
  apply (changes: readonly HealthChange[]): void {
    for (const c of changes) {
      const [id, url, address, state, since, lastError] = c
      const key = `${id}|${url}|${address}`
      if (state === 'healthy') this.held.delete(key); else this.held.set(key, c)
      const e = this.sets.get(id)?.set.endpoint(url, address)
      if (e === undefined) continue
      e.state = state
      e.since = since
      e.lastError = lastError
      e.failures = 0
    }
  }

  /** `gatehouse_upstream_target_healthy` for every balanced collection. */
  prometheus (): string {
    let out = '# HELP gatehouse_upstream_target_healthy Whether this instance sends traffic to the upstream target (1) or holds it out as unhealthy or ejected (0).\n# TYPE gatehouse_upstream_target_healthy gauge\n'
    for (const { set } of this.sets.values()) {
      for (const t of set.health()) {
        out += `gatehouse_upstream_target_healthy{collection="${esc(set.collection.name)}",collection_id="${esc(set.collection.id)}",target="${esc(t.url)}"} ${t.state === 'healthy' ? 1 : 0}\n`
      }
    }
    return out
  }

  close (): void { for (const id of [...this.sets.keys()]) this.drop(id) }
}

/** One IP-address target and nothing that needs a set. */
export function direct (u: UpstreamSettings): boolean {
  if (u.targets.length !== 1 || u.health_checks.active !== null || u.max_in_flight_per_target !== null || u.retries.attempts > 0) return false
  let host: string
  try { host = new URL(u.targets[0]!.url).hostname.replace(/^\[|\]$/g, '') } catch { return true }
  return net.isIP(host) !== 0
}

const esc = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
