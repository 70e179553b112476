/**
 * Outbound address guard for workflow HTTP requests: loopback, private,
 * link-local (cloud metadata), CGNAT, unspecified and multicast addresses are
 * refused unless the allowlist names the host or a CIDR holding the address.
 * The check runs on the resolved address of every connection (a custom
 * `lookup`), so IP literals in any notation and redirects cannot slip past it.
 */
import dns from 'node:dns'
import net from 'node:net'

const BLOCKED_V4: Array<[number, number]> = [
  [0x00000000, 8], [0x0a000000, 8], [0x64400000, 10], [0x7f000000, 8], [0xa9fe0000, 16], [0xac100000, 12],
  [0xc0000000, 24], [0xc0a80000, 16], [0xc6120000, 15], [0xe0000000, 4], [0xf0000000, 4]
]

const v4int = (ip: string) => ip.split('.').reduce((a, o) => (a * 256) + Number(o), 0)

function inV4 (ip: string, base: number, bits: number): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
  return ((v4int(ip) & mask) >>> 0) === ((base & mask) >>> 0)
}

/** True for addresses a workflow may not reach by default. */
export function isBlockedAddress (ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) ip = mapped[1]
  if (net.isIPv4(ip)) return BLOCKED_V4.some(([b, n]) => inV4(ip, b, n))
  const v = ip.toLowerCase()
  return v === '::' || v === '::1' || v.startsWith('fe8') || v.startsWith('fe9') || v.startsWith('fea') || v.startsWith('feb') ||
    v.startsWith('fc') || v.startsWith('fd') || v.startsWith('ff') || v.startsWith('::ffff:') || v.startsWith('64:ff9b:')
}

export interface Allowlist { hosts: Set<string>, cidrs: Array<{ v4: boolean, base: number, bits: number, raw: string }> }

export function parseAllowlist (entries: string[]): Allowlist {
  const hosts = new Set<string>()
  const cidrs: Allowlist['cidrs'] = []
  for (const e of entries) {
    const [ip, bits] = e.split('/')
    if (net.isIPv4(ip)) cidrs.push({ v4: true, base: v4int(ip), bits: bits === undefined ? 32 : Number(bits), raw: e })
    else if (net.isIPv6(ip)) cidrs.push({ v4: false, base: 0, bits: bits === undefined ? 128 : Number(bits), raw: ip.toLowerCase() })
    else hosts.add(e.toLowerCase())
  }
  return { hosts, cidrs }
}

/** True when the allowlist names the host or holds the address. */
export function allowed (list: Allowlist, host: string, ip: string): boolean {
  if (list.hosts.has(host.toLowerCase())) return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  const addr = mapped !== null ? mapped[1] : ip
  return list.cidrs.some(c => c.v4 ? net.isIPv4(addr) && inV4(addr, c.base, c.bits) : addr.toLowerCase() === c.raw)
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
      else (callback as (e: null, a: string, f: number) => void)(null, list2[0].address, list2[0].family)
    })
  }
}
