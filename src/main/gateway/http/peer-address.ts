/**
 * The peer's address as text, read as bytes: uWS's getRemoteAddressAsText formats the address in
 * C++ and hands an ArrayBuffer that then had to become a Buffer and be decoded (about 0.5 µs a
 * request, beside the getpeername the layer makes either way). IPv4 is spelled here, and the
 * text of the last IPv4 and of the last IPv6 address are kept: a client's requests come from one
 * address, so most requests spell nothing. IPv6 keeps the layer's own text (asked once per new address).
 */
import type { GatewayResponse } from './types.js'

let lastV4 = -1
let lastV4Text = ''
const lastV6 = new Uint8Array(16)
let lastV6Text: string | null = null

export function peerAddress (res: GatewayResponse): string {
  const raw = res.getRemoteAddress()
  const n = raw.byteLength
  if (n === 4) {
    const b = new Uint8Array(raw)
    // b has 4 bytes: indexes 0-3 are in range.
    const key = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0
    if (key !== lastV4) { lastV4 = key; lastV4Text = `${b[0]!}.${b[1]!}.${b[2]!}.${b[3]!}` }
    return lastV4Text
  }
  if (n === 16) {
    const b = new Uint8Array(raw)
    let same = lastV6Text !== null
    for (let i = 0; same && i < 16; i++) same = b[i] === lastV6[i]
    if (same) return lastV6Text!
    lastV6.set(b)
    lastV6Text = Buffer.from(res.getRemoteAddressAsText()).toString()
    return lastV6Text
  }
  return Buffer.from(res.getRemoteAddressAsText()).toString()
}
