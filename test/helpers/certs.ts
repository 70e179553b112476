/**
 * Real certificates for TLS tests, made with the openssl CLI in a temp directory:
 * a CA, a server certificate for 127.0.0.1 signed by it, client certificates
 * signed by it, and a self-signed client certificate the CA never saw.
 */
import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createTempDir } from './db.js'

interface T { teardown (fn: () => unknown): void }

export interface CertPair { cert: string, key: string, certPem: Buffer, keyPem: Buffer, fingerprint: string }
export interface TestPki { dir: string, ca: CertPair, server: CertPair, client: CertPair, other: CertPair, rogue: CertPair }

export async function makeTestPki (t: T): Promise<TestPki> {
  const dir = await createTempDir(t, 'gatehouse-pki-')
  const f = (name: string) => path.join(dir, name)
  const ssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { stdio: 'pipe' })
  const pair = (name: string): CertPair => {
    const certPem = fs.readFileSync(f(`${name}.crt`))
    return {
      cert: f(`${name}.crt`), key: f(`${name}.key`), certPem, keyPem: fs.readFileSync(f(`${name}.key`)),
      fingerprint: new X509Certificate(certPem).fingerprint256.replace(/:/g, '').toLowerCase()
    }
  }
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=Gatehouse Test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', f('ca.key'), '-out', f('ca.crt'))
  const signed = (name: string, cn: string, ext: string) => {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`))
    fs.writeFileSync(f(`${name}.ext`), ext)
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.crt`))
    return pair(name)
  }
  const server = signed('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n')
  const client = signed('client', 'acme-billing', 'extendedKeyUsage=clientAuth\n')
  const other = signed('other', 'acme-other', 'extendedKeyUsage=clientAuth\n')
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=rogue',
    '-addext', 'extendedKeyUsage=clientAuth', '-keyout', f('rogue.key'), '-out', f('rogue.crt'))
  return { dir, ca: pair('ca'), server, client, other, rogue: pair('rogue') }
}
