/** Reading HTTP/1.1 answers off raw sockets in tests. */

/** The data of a chunked body, complete or cut short (what arrived of it). */
export function dechunk (b: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const eol = b.indexOf('\r\n', at)
    if (eol < 0) break
    const n = parseInt(b.subarray(at, eol).toString('latin1'), 16)
    if (!(n > 0)) break
    parts.push(b.subarray(eol + 2, Math.min(b.length, eol + 2 + n)))
    at = eol + 2 + n + 2
  }
  return Buffer.concat(parts)
}

/** Splits an answer into its head and body (decoded when chunked). */
export function splitAnswer (b: Buffer): { status: number, head: string, body: Buffer } {
  const end = b.indexOf('\r\n\r\n')
  if (end < 0) return { status: 0, head: b.toString('latin1'), body: Buffer.alloc(0) }
  const head = b.subarray(0, end).toString('latin1')
  const rest = b.subarray(end + 4)
  return { status: Number(head.slice(9, 12)), head, body: /\r\ntransfer-encoding: *chunked/i.test(head) ? dechunk(rest) : rest }
}
