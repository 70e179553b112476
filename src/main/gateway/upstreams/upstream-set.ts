/**
 * One collection's upstream at run time, compiled when its configuration changes: targets, their
 * addresses (host names looked up again every UPSTREAM_DNS_REFRESH_MS), an endpoint with its own
 * keep-alive pool per address, the balancer, health and the retry budget.
 *
 *   targets ─(DNS)─> endpoints (address × pool × health) ─> balancer ─> pick(request)
 *
 * A new configuration takes over the endpoints it keeps (same URL and address: pool, health and
 * requests in flight carry on); endpoints that leave close their idle connections and finish
 * what they carry.
 */
import dns from 'node:dns'
import net from 'node:net'
import type { Collection, UpstreamSettings } from '../../../common/types.js'
import type { Logger } from '../../logger.js'
import type { GatewayExchange } from '../exchange.js'
import { startProbing } from './active-checks.js'
import { consistentHash, leastConnections, roundRobin, type Balancer } from './balancer.js'
import { newEndpoint, type Endpoint, type TargetInfo } from './endpoint.js'
import { armReturn, type HealthChange, type HealthScope, type HealthShare } from './health.js'
import { keyReader, type KeyReader } from './request-key.js'
import { RetryBudget } from './retry-budget.js'

export type Lookup = (hostname: string, done: (err: Error | null, addresses: string[]) => void) => void

export interface SetOptions {
  maxIdle: number
  dnsRefreshMs: number
  logger: Logger
  /** How host names become addresses (default: the system resolver, as connections use it). */
  lookup?: Lookup
  /** Gateway threads: this thread's part in the process's one health view. */
  share?: HealthShare
  /** A worker thread: the main thread's word on an address not healthy, for endpoints made after it came. */
  known?: (collectionId: string, url: string, address: string) => HealthChange | undefined
}

const systemLookup: Lookup = (hostname, done) => {
  dns.lookup(hostname, { all: true }, (err, found) => { done(err, err === null ? found.map(f => f.address) : []) })
}

export interface TargetHealth {
  url: string
  weight: number
  state: 'healthy' | 'unhealthy' | 'ejected'
  since: string
  last_error: string | null
  addresses: Array<{ address: string, state: string, since: string, last_error: string | null, in_flight: number }>
}

// pick()'s predicates read these instead of closing over the request: no closure per pick.
let pickToken: object | null = null
let pickCap = Infinity
const usableHealthy = (e: Endpoint): boolean => e.state === 'healthy' && e.triedBy !== pickToken && e.inFlight < pickCap
const usableUntried = (e: Endpoint): boolean => e.triedBy !== pickToken && e.inFlight < pickCap
const usableAny = (e: Endpoint): boolean => e.inFlight < pickCap

export class UpstreamSet {
  endpoints: Endpoint[] = []
  balancer: Balancer
  readonly budget: RetryBudget
  readonly keyOf: KeyReader | null
  readonly scope: HealthScope
  readonly targets: TargetInfo[]
  private readonly byTarget = new Map<string, Endpoint[]>()
  private alive = true

  constructor (public collection: Collection, readonly settings: UpstreamSettings, private readonly opts: SetOptions, previous: UpstreamSet | null) {
    this.targets = settings.targets.map(targetInfo)
    this.budget = new RetryBudget(settings.retries.budget_percent)
    this.keyOf = settings.balancing === 'consistent_hash' ? keyReader(settings.hash_on) : null
    this.scope = {
      collectionId: collection.id,
      endpoints: () => this.endpoints,
      passive: settings.health_checks.passive,
      active: settings.health_checks.active,
      logger: opts.logger,
      timers: new Set(),
      share: opts.share ?? null
    }
    const reuse = new Map<string, Endpoint>()
    for (const e of previous?.endpoints ?? []) reuse.set(`${e.target.url}|${e.address}`, e)
    for (const t of this.targets) {
      // Until its first lookup answers, a host name is one endpoint connecting by name.
      const known = previous?.byTarget.get(t.url)?.map(e => e.address) ?? [t.hostname]
      this.byTarget.set(t.url, known.map(a => this.endpointFor(t, a, known.length, reuse)))
    }
    this.balancer = this.rebuild()
    previous?.close(new Set(this.endpoints))
    const now = Date.now()
    for (const e of this.endpoints) {
      if (e.ejectedUntil > now) armReturn(this.scope, e, now)
      startProbing(this.scope, e, () => this.alive && this.endpoints.includes(e))
    }
    for (const t of this.targets) if (net.isIP(t.hostname) === 0) this.follow(t)
  }

  /**
   * The endpoint for a request's next attempt: a healthy one not tried yet, else any not tried
   * (a fully-ejected upstream still tries), else with `again` any at all. 'capped' when endpoints
   * were left out only for being at max_in_flight_per_target.
   */
  pick (x: GatewayExchange, token: object, again: boolean): Endpoint | 'capped' | null {
    const key = this.keyOf === null ? 0 : this.keyOf(x)
    pickToken = token
    pickCap = this.settings.max_in_flight_per_target ?? Infinity
    const e = this.balancer.pick(usableHealthy, key) ?? this.balancer.pick(usableUntried, key) ?? (again ? this.balancer.pick(usableAny, key) : null)
    pickToken = null
    if (e !== null) return e
    if (pickCap !== Infinity) {
      for (const o of this.endpoints) if (o.inFlight >= pickCap && (again || o.triedBy !== token)) return 'capped'
    }
    return null
  }

  health (): TargetHealth[] {
    return this.targets.map(t => {
      const eps = this.byTarget.get(t.url) ?? []
      const state = eps.some(e => e.state === 'healthy') ? 'healthy' : eps.some(e => e.state === 'ejected') ? 'ejected' : 'unhealthy'
      const inState = eps.filter(e => e.state === state)
      return {
        url: t.url,
        weight: t.weight,
        state,
        since: inState.map(e => e.since).sort().pop() ?? new Date().toISOString(),
        last_error: eps.map(e => e.lastError).find(m => m !== null) ?? null,
        addresses: eps.map(e => ({ address: e.address, state: e.state, since: e.since, last_error: e.lastError, in_flight: e.inFlight }))
      }
    })
  }

  /** The endpoint of a target's address (health from another thread names it so). */
  endpoint (url: string, address: string): Endpoint | undefined {
    return this.byTarget.get(url)?.find(e => e.address === address)
  }

  /** Stops timers; closes the pools of endpoints not kept by a successor. */
  close (keep: ReadonlySet<Endpoint> = new Set()): void {
    this.alive = false
    for (const t of this.scope.timers) clearTimeout(t)
    this.scope.timers.clear()
    for (const e of this.endpoints) if (!keep.has(e)) e.pool.close()
  }

  private endpointFor (t: TargetInfo, address: string, count: number, reuse: Map<string, Endpoint>): Endpoint {
    const old = reuse.get(`${t.url}|${address}`)
    // The target's share is split evenly across its addresses.
    const weight = t.weight / count
    if (old !== undefined) { old.target = t; old.weight = weight; return old }
    const e = newEndpoint(t, address, weight, this.opts.maxIdle)
    const k = this.opts.known?.(this.collection.id, t.url, address)
    if (k !== undefined) { e.state = k[3]; e.since = k[4]; e.lastError = k[5] }
    return e
  }

  private rebuild (): Balancer {
    this.endpoints = [...this.byTarget.values()].flat()
    const b = this.settings.balancing
    return b === 'least_connections' ? leastConnections(this.endpoints) : b === 'consistent_hash' ? consistentHash(this.endpoints) : roundRobin(this.endpoints)
  }

  /** Looks the target's host name up now and every dnsRefreshMs; a changed answer swaps its endpoints. */
  private follow (t: TargetInfo): void {
    let failed = false
    const lookup = (): void => {
      ;(this.opts.lookup ?? systemLookup)(t.hostname, (err, found) => {
        if (!this.alive) return
        if (err !== null || found.length === 0) {
          if (!failed) this.opts.logger.warn({ collection_id: this.collection.id, target: t.url, err: err?.message }, 'upstream target host name did not resolve; its current addresses are kept')
          failed = true
        } else {
          failed = false
          this.setAddresses(t, [...new Set(found)].sort())
        }
        const timer = setTimeout(() => { this.scope.timers.delete(timer); lookup() }, this.opts.dnsRefreshMs)
        timer.unref()
        this.scope.timers.add(timer)
      })
    }
    lookup()
  }

  private setAddresses (t: TargetInfo, addresses: string[]): void {
    const cur = this.byTarget.get(t.url) ?? []
    if (cur.length === addresses.length && cur.every((e, i) => e.address === addresses[i])) return
    const reuse = new Map(cur.map(e => [`${t.url}|${e.address}`, e]))
    const next = addresses.map(a => this.endpointFor(t, a, addresses.length, reuse))
    for (const e of cur) if (!next.includes(e)) e.pool.close()
    this.byTarget.set(t.url, next)
    this.balancer = this.rebuild()
    for (const e of next) if (!cur.includes(e)) startProbing(this.scope, e, () => this.alive && this.endpoints.includes(e))
    this.opts.logger.info({ collection_id: this.collection.id, target: t.url, addresses }, 'upstream target addresses changed')
  }
}

function targetInfo (t: { url: string, weight: number }): TargetInfo {
  const url = new URL(t.url)
  const secure = url.protocol === 'https:'
  return {
    url: t.url,
    weight: t.weight,
    secure,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port !== '' ? Number(url.port) : secure ? 443 : 80,
    hostHeader: url.host,
    basePath: url.pathname.replace(/\/$/, '')
  }
}
