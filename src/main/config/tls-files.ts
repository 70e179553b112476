/**
 * Checks the gateway's TLS settings at boot: TLS_CERT and TLS_KEY come together,
 * TLS_CA only with them, and each names a readable file holding what it should
 * (a certificate, a private key, CA certificates). Returns the names of the bad ones.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto'
import fs from 'node:fs'

export interface TlsFiles { TLS_CERT?: string, TLS_KEY?: string, TLS_CA?: string }

export function checkTlsFiles (v: TlsFiles): string[] {
  const bad: string[] = []
  const cert = v.TLS_CERT ?? ''
  const key = v.TLS_KEY ?? ''
  const ca = v.TLS_CA ?? ''
  if (cert === '' && key === '') {
    if (ca !== '') bad.push('TLS_CA')
    return bad
  }
  const read = (file: string): Buffer | null => {
    try { return fs.readFileSync(file) } catch { return null }
  }
  const parses = (file: string, parse: (b: Buffer) => unknown): boolean => {
    const b = read(file)
    if (b === null) return false
    try { parse(b); return true } catch { return false }
  }
  if (cert === '' || !parses(cert, b => new X509Certificate(b))) bad.push('TLS_CERT')
  if (key === '' || !parses(key, b => createPrivateKey(b))) bad.push('TLS_KEY')
  if (ca !== '' && !parses(ca, b => new X509Certificate(b))) bad.push('TLS_CA')
  return bad
}
