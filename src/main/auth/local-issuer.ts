/**
 * The built-in issuer used when no OIDC settings are given: an ES256 key pair
 * kept in DATA_DIR (0600), tokens minted by `npm run token`.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose'
import { createOnce } from '../config/data-dir-file.js'
import type { Role } from './roles.js'

export const LOCAL_ISSUER = 'gatehouse-local'
export const LOCAL_AUDIENCE = 'gatehouse-management'
const KEY_FILE = 'local-issuer-key.json'

export interface LocalIssuer {
  publicJwk: JWK
  sign (claims: { sub: string, role: Role, ttlSeconds?: number }): Promise<string>
}

async function loadOrCreateKey (dataDir: string): Promise<JWK> {
  const file = path.join(dataDir, KEY_FILE)
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as JWK
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  await fs.mkdir(dataDir, { recursive: true })
  const { privateKey } = await generateKeyPair('ES256', { extractable: true })
  const jwk = { ...await exportJWK(privateKey), alg: 'ES256', use: 'sig', kid: `local-${Date.now().toString(36)}` }
  // The first of two concurrent starts wins; the other reads its key.
  return JSON.parse(await createOnce(file, JSON.stringify(jwk), 0o600)) as JWK
}

export async function openLocalIssuer (dataDir: string): Promise<LocalIssuer> {
  const priv = await loadOrCreateKey(dataDir)
  const { d: _d, ...publicJwk } = priv
  const key = await importJWK(priv, 'ES256')
  return {
    publicJwk,
    async sign ({ sub, role, ttlSeconds = 3600 }) {
      return await new SignJWT({ roles: [role] })
        .setProtectedHeader({ alg: 'ES256', kid: priv.kid, typ: 'JWT' })
        .setIssuer(LOCAL_ISSUER)
        .setAudience(LOCAL_AUDIENCE)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(key)
    }
  }
}
