/**
 * TRUSTED_PROXIES: the load balancers and reverse proxies in front of the gateway (CIDRs). When
 * the connection comes from one of them, the client's address is read from X-Forwarded-For, right
 * to left, skipping trusted hops: the first untrusted address is the client (what ip_allowlist
 * checks). X-Forwarded-Host and X-Forwarded-Proto are believed from a trusted peer only. Without
 * the setting, or from any other peer, the socket's address is the client and those headers are
 * the gateway's own.
 */
import { cidrContains, parseCidr, type Cidr } from '../../common/cidr.js'

export interface TrustedProxies {
  /** Whether the immediate peer is a trusted proxy. */
  trusts (peer: string): boolean
  /** The client's address given the peer and the X-Forwarded-For values received (null: none). */
  clientAddress (peer: string, xff: string | null): string
}

/** An address as X-Forwarded-For may carry it: bare, "[v6]" or "[v6]:port", "v4:port". */
function bareAddress (s: string): string {
  const t = s.trim()
  if (t.startsWith('[')) return t.slice(1, t.indexOf(']') === -1 ? undefined : t.indexOf(']'))
  const colons = t.split(':').length - 1
  return colons === 1 ? t.slice(0, t.indexOf(':')) : t
}

export function createTrustedProxies (cidrs: readonly Cidr[]): TrustedProxies {
  const trusts = (ip: string) => cidrs.some(c => cidrContains(c, ip))
  return {
    trusts: cidrs.length === 0 ? () => false : trusts,
    clientAddress (peer, xff) {
      if (cidrs.length === 0 || xff === null || !trusts(peer)) return peer
      const hops = xff.split(',')
      let client = peer
      for (let i = hops.length - 1; i >= 0; i--) {
        const ip = bareAddress(hops[i]!) // 0 <= i < hops.length
        if (parseCidr(ip) === null) break
        client = ip
        if (!trusts(ip)) break
      }
      return client
    }
  }
}
