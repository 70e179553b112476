/**
 * Outbound address guard for workflow HTTP requests: loopback, private,
 * link-local (cloud metadata), CGNAT, unspecified and multicast addresses are
 * refused unless the allowlist names the host or a CIDR holding the address.
 * The check runs on the resolved address of every connection (a custom
 * `lookup`), so IP literals in any notation and redirects cannot slip past it.
 */
import dns from 'node:dns'
import type net from 'node:net'
import { cidrContains, ipBytes, parseCidr, type Cidr } from '../../common/cidr.js'

const BLOCKED_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'].map(c => parseCidr(c)!)
// ::/96 holds ::, ::1 and the deprecated IPv4-compatible form (::127.0.0.1); then NAT64, unique-local,
// link-local, site-local, multicast, documentation and discard ranges.
const BLOCKED_V6 = ['::/96', '64:ff9b::/96', '64:ff9b:1::/48', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8', '2001:db8::/32', '100::/64']
  .map(c => parseCidr(c)!)

const dotted = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`

/** True for addresses a workflow may not reach by default (any notation; unparseable counts as blocked). */
export function isBlockedAddress (ip: string): boolean {
  const b = ipBytes(ip)
  if (b === null) return true
  if (b.length === 4) return BLOCKED_V4.some(c => cidrContains(c, ip))
  // IPv4-mapped (::ffff:a.b.c.d, also written in hex): judged by the IPv4 address it carries.
  if (b.subarray(0, 10).every(x => x === 0) && b[10] === 0xff && b[11] === 0xff) return BLOCKED_V4.some(c => cidrContains(c, dotted(b, 12)))
  return BLOCKED_V6.some(c => cidrContains(c, ip))
}

export interface Allowlist { hosts: Set<string>, cidrs: Cidr[] }

/** OUTBOUND_ALLOWLIST entries: IPv4 or IPv6 addresses and CIDRs, or host names. */
export function parseAllowlist (entries: string[]): Allowlist {
  const hosts = new Set<string>()
  const cidrs: Cidr[] = []
  for (const e of entries) {
    const c = parseCidr(e.replace(/^\[(.*)\]$/, '$1'))
    if (c !== null) cidrs.push(c)
    else hosts.add(e.toLowerCase())
  }
  return { hosts, cidrs }
}

/** True when the allowlist names the host or holds the address. */
export function allowed (list: Allowlist, host: string, ip: string): boolean {
  if (list.hosts.has(host.toLowerCase())) return true
  return list.cidrs.some(c => cidrContains(c, ip))
}

/** A `lookup` for http.request that refuses blocked addresses (after DNS, for names and literals alike). */
export function guardedLookup (list: Allowlist): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...(options as dns.LookupOptions), all: true }, (err, addresses) => {
      if (err !== null) { (callback as (e: Error | null) => void)(err); return }
      const list2 = addresses as dns.LookupAddress[]
      const bad = list2.find(a => isBlockedAddress(a.address) && !allowed(list, hostname, a.address))
      if (bad !== undefined) {
        (callback as (e: Error | null) => void)(Object.assign(new Error(`The address ${bad.address} of '${hostname}' is not allowed for workflow requests (private, loopback or link-local); add it to OUTBOUND_ALLOWLIST to permit it.`), { code: 'EADDRBLOCKED' }))
        return
      }
      if ((options as dns.LookupOptions).all === true) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list2)
      else {
        const first = list2[0]
        // dns answers an error rather than no address; kept as the same error should a resolver not.
        if (first === undefined) (callback as (e: Error | null) => void)(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }))
        else (callback as (e: null, a: string, f: number) => void)(null, first.address, first.family)
      }
    })
  }
}
