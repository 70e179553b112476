/** IPv4 / IPv6 CIDR matching (IPv4-mapped IPv6 addresses match IPv4 ranges). */
import net from 'node:net'

export interface Cidr { bytes: Uint8Array, bits: number }

export function ipBytes (ip: string): Uint8Array | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) ip = mapped[1]! // group 1 is not optional
  if (net.isIPv4(ip)) return Uint8Array.from(ip.split('.').map(Number))
  if (!net.isIPv6(ip)) return null
  const [head = '', tail] = ip.split('::')
  const parse = (s: string) => s === '' ? [] : s.split(':')
  let groups = parse(head)
  let rest = tail === undefined ? [] : parse(tail)
  const last = (rest.length > 0 ? rest : groups).at(-1) ?? ''
  if (last.includes('.')) {
    // net.isIPv6 accepted it, so the embedded IPv4 address has its four parts.
    const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number)
    const extra = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
    if (rest.length > 0) rest = [...rest.slice(0, -1), ...extra]
    else groups = [...groups.slice(0, -1), ...extra]
  }
  const fill = tail === undefined ? [] : new Array(8 - groups.length - rest.length).fill('0')
  const all = [...groups, ...fill, ...rest]
  const out = new Uint8Array(16)
  all.forEach((g, i) => { const v = parseInt(g, 16); out[i * 2] = v >> 8; out[i * 2 + 1] = v & 255 })
  return out
}

export function parseCidr (s: string): Cidr | null {
  const [ip = '', len] = s.trim().split('/')
  const bytes = ipBytes(ip)
  if (bytes === null) return null
  const max = bytes.length * 8
  const bits = len === undefined ? max : Number(len)
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return null
  return { bytes, bits }
}

export function cidrContains (c: Cidr, ip: string): boolean {
  const b = ipBytes(ip)
  if (b === null || b.length !== c.bytes.length) return false
  let bits = c.bits
  for (let i = 0; i < b.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 255 : (0xff << (8 - bits)) & 255
    // i < b.length, and both have that length.
    if ((b[i]! & mask) !== (c.bytes[i]! & mask)) return false
  }
  return true
}

/** Parses a list of addresses and CIDRs (TRUSTED_PROXIES); throws naming the first entry that is not an address or CIDR. */
export function parseTrustedProxies (list: readonly string[]): Cidr[] {
  return list.map(s => {
    const c = parseCidr(s)
    if (c === null) throw new Error(`'${s}' is not an IP address or CIDR`)
    return c
  })
}
