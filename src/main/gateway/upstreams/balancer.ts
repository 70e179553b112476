/**
 * The balancers: each picks one endpoint among those `usable` says may take a request now
 * (healthy, not ejected, under the in-flight cap, not already tried). Built when the endpoint
 * list changes (configuration, DNS), never per request; a pick allocates nothing.
 */
import type { Endpoint } from './endpoint.js'
import { buildRing, ringPick } from './hash-ring.js'

export interface Balancer {
  /** `key` is the request's hash (consistent_hash only; 0 otherwise). */
  pick (usable: (e: Endpoint) => boolean, key: number): Endpoint | null
}

/**
 * Smooth weighted round robin (nginx's): every pick adds each endpoint's weight to its current
 * value and takes the largest, which then gives back the total. Weights 3:1 give a a b a, a a b a…
 * interleaved rather than a a a b in bursts.
 */
export function roundRobin (endpoints: readonly Endpoint[]): Balancer {
  const current = new Float64Array(endpoints.length)
  return {
    pick (usable) {
      let best = -1
      let total = 0
      // current has one slot per endpoint; i and best are indexes of both.
      for (let i = 0; i < endpoints.length; i++) {
        const e = endpoints[i]!
        if (!usable(e)) continue
        current[i]! += e.weight
        total += e.weight
        if (best < 0 || current[i]! > current[best]!) best = i
      }
      if (best < 0) return null
      current[best]! -= total
      return endpoints[best]!
    }
  }
}

/** Fewest requests in flight relative to weight; ties go round the list so equal endpoints share. */
export function leastConnections (endpoints: readonly Endpoint[]): Balancer {
  let start = 0
  return {
    pick (usable) {
      const n = endpoints.length
      let best: Endpoint | null = null
      let bestLoad = Infinity
      for (let k = 0; k < n; k++) {
        const e = endpoints[(start + k) % n]! // an index modulo n = endpoints.length
        if (!usable(e)) continue
        const load = (e.inFlight + 1) / e.weight
        if (load < bestLoad) { best = e; bestLoad = load }
      }
      start = n === 0 ? 0 : (start + 1) % n
      return best
    }
  }
}

/** A hash ring: a key keeps its endpoint while that endpoint is usable; removing one moves only its keys. */
export function consistentHash (endpoints: readonly Endpoint[]): Balancer {
  const ring = buildRing(endpoints)
  return { pick (usable, key) { return ringPick(ring, endpoints, usable, key) } }
}
