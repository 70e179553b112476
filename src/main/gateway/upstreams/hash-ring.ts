/**
 * The consistent-hash ring: each endpoint has points on a 32-bit circle (160 per 100 of weight,
 * placed by hashing "<target url>#<address>#<n>", so a point depends only on its own endpoint);
 * a key goes to the first point at or after its hash, skipping endpoints that cannot take it.
 * Removing an endpoint removes only its points: the keys it held move, no other key does.
 */
import { createHash } from 'node:crypto'
import type { Endpoint } from './endpoint.js'

export interface Ring { points: Uint32Array, owners: Uint16Array }

const POINTS_PER_100 = 160

export function buildRing (endpoints: readonly Endpoint[]): Ring {
  const all: Array<[number, number]> = []
  endpoints.forEach((e, i) => {
    const n = Math.max(1, Math.round(POINTS_PER_100 * e.weight / 100))
    for (let k = 0; k < n; k++) {
      // md5 only when the ring is built: well spread points; requests use the cheap hashKey below.
      const d = createHash('md5').update(`${e.target.url}#${e.address}#${k}`).digest()
      all.push([d.readUInt32BE(0), i])
    }
  })
  all.sort((a, b) => a[0] - b[0])
  return { points: Uint32Array.from(all, p => p[0]), owners: Uint16Array.from(all, p => p[1]) }
}

export function ringPick (ring: Ring, endpoints: readonly Endpoint[], usable: (e: Endpoint) => boolean, key: number): Endpoint | null {
  const { points, owners } = ring
  const n = points.length
  if (n === 0) return null
  // First point >= key (binary search), wrapping round.
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (points[mid]! < key) lo = mid + 1 // 0 <= mid < hi <= n
    else hi = mid
  }
  for (let k = 0; k < n; k++) {
    const e = endpoints[owners[(lo + k) % n]!]! // owners has n entries, each an endpoint's index
    if (usable(e)) return e
  }
  return null
}

/** FNV-1a over the key's UTF-16 units with a final avalanche (murmur3's fmix32): cheap and well spread. */
export function hashKey (s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) }
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16
  return h >>> 0
}
