/**
 * What consistent hashing hashes, per `hash_on`: the client address, the path, a header or a
 * cookie. A request without the header or cookie hashes its client address instead (Kong's
 * fallback), so it still keeps to one target.
 */
import type { GatewayExchange } from '../exchange.js'
import { hashKey } from './hash-ring.js'

export type KeyReader = (x: GatewayExchange) => number

export function keyReader (hashOn: string): KeyReader {
  if (hashOn === 'path') return x => hashKey(x.url)
  if (hashOn.startsWith('header:')) {
    const name = hashOn.slice(7).toLowerCase()
    return x => {
      const h = x.headers
      for (let i = 0; i < h.length; i++) if (h[i]![0] === name) return hashKey(h[i]![1]) // i < h.length, as below
      return hashKey(x.remoteIp)
    }
  }
  if (hashOn.startsWith('cookie:')) {
    const name = hashOn.slice(7)
    return x => {
      const h = x.headers
      for (let i = 0; i < h.length; i++) {
        if (h[i]![0] !== 'cookie') continue
        const v = cookieValue(h[i]![1], name)
        if (v !== null) return hashKey(v)
      }
      return hashKey(x.remoteIp)
    }
  }
  return x => hashKey(x.remoteIp)
}

function cookieValue (header: string, name: string): string | null {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return null
}
