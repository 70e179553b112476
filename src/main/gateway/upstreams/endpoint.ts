/**
 * One address of one target: what the balancers pick, with its keep-alive pool, requests in
 * flight and health. A target whose host name resolves to several addresses has one endpoint
 * per address, each carrying an equal part of the target's weight.
 */
import { Exchange, OriginPool, type ExchangeOptions } from '../upstream.js'

export interface TargetInfo {
  url: string
  weight: number
  secure: boolean
  /** The URL's host name (the TLS server name and the DNS name to follow), without brackets. */
  hostname: string
  port: number
  /** `host` header value and path prefix sent to this target. */
  hostHeader: string
  basePath: string
}

export type EndpointState = 'healthy' | 'unhealthy' | 'ejected'

export interface Endpoint {
  target: TargetInfo
  /** An IP address, or the host name itself until its first lookup answers. */
  address: string
  weight: number
  pool: TargetPool
  inFlight: number
  // Passive health: failures in a row, ejection end (0: not ejected), how many ejections so far.
  failures: number
  ejectedUntil: number
  ejections: number
  lastEjectionEnd: number
  // Active health: null until the first probe answers; counts of probe results in a row.
  probeHealthy: boolean | null
  probeStreak: number
  state: EndpointState
  since: string
  lastError: string | null
  /** The last request that tried this endpoint (a retry goes elsewhere first). */
  triedBy: object | null
}

/**
 * A target address's pool. Closed when the address leaves the configuration: idle sockets go at
 * once; a socket still carrying a request finishes it and is then closed instead of kept.
 */
export class TargetPool extends OriginPool {
  closed = false

  override request (opts: ExchangeOptions): Exchange {
    const ex = new TrackedExchange(this, opts)
    ex.start()
    return ex
  }

  override release (ps: Parameters<OriginPool['release']>[0]): void {
    if (this.closed) { ps.owner = null; ps.socket.destroy(); return }
    super.release(ps)
  }

  override close (): void { this.closed = true; super.close() }
}

/** Events that also hear of the client going away (Exchange.abort reports nothing to its events). */
export interface AbortAwareEvents { onAbort?: () => void }

class TrackedExchange extends Exchange {
  private readonly events: AbortAwareEvents
  constructor (owner: TargetPool, opts: ExchangeOptions) { super(owner, opts); this.events = opts.events as AbortAwareEvents }
  override abort (): void {
    super.abort()
    this.events.onAbort?.()
  }
}

export function newEndpoint (target: TargetInfo, address: string, weight: number, maxIdle: number): Endpoint {
  return {
    target, address, weight,
    pool: new TargetPool(address, target.port, target.secure, target.hostname, maxIdle),
    inFlight: 0, failures: 0, ejectedUntil: 0, ejections: 0, lastEjectionEnd: 0,
    probeHealthy: null, probeStreak: 0, state: 'healthy', since: new Date().toISOString(), lastError: null, triedBy: null
  }
}
