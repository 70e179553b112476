/**
 * Client authentication at the gateway: who is calling (X-Client-ID,
 * X-Profile-ID, credentials per the profile's auth type) and may they call this
 * collection. Works on an in-memory snapshot of clients and profiles rebuilt on
 * every change, so a call costs no database round trip; verified tokens are
 * cached until their expiry, keyed by the profile's version (a rotation bumps it).
 *
 *   401: credentials absent or wrong, unknown client/profile
 *   403: client suspended, collection not granted, method or address not allowed
 *   503: an oidc profile's issuer keys could not be fetched
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose'
import { AppError, forbidden, serviceUnavailable, unauthorized } from '../../common/errors.js'
import { ALGORITHMS, discoverJwksUrl } from '../auth/verifier.js'
import { cidrContains, type Cidr } from '../../common/cidr.js'

export type ProfileAuthType = 'api_key' | 'jwt' | 'oidc' | 'mtls' | 'none'

export interface ProfileSnapshot {
  id: string
  version: number
  client_id: string
  client_status: 'active' | 'suspended'
  auth_type: ProfileAuthType
  /** SHA-256 hex of the api_key token. */
  api_key_hash: string | null
  /** The jwt profile's HS256 secret. */
  jwt_secret: string | null
  oidc: { issuer: string, jwks_url?: string | null, audience?: string | null } | null
  mtls_fingerprint: string | null
  collection_ids: string[]
  allowed_methods: string[] | null
  ip_allowlist: Cidr[] | null
  policy_id: string | null
}

export interface CallIdentity {
  /** The collection called; null for the gateway MCP endpoint, which belongs to no collection. */
  collectionId: string | null
  method: string
  authorization: string | undefined
  clientId: string | undefined
  profileId: string | undefined
  remoteIp: string
  /** SHA-256 fingerprint (hex) of the client certificate on a TLS listener. */
  certFingerprint?: string
}

export interface Principal { client_id: string, profile_id: string, policy_id: string | null }

const MAX_CACHE = 10_000
const CLOCK_SKEW_S = 60

export const hashApiKey = (token: string): string => createHash('sha256').update(token).digest('hex')

export function createProfileAuthenticator () {
  const verified = new Map<string, number>() // cache key -> expiry (ms)
  const jwks = new Map<string, JWTVerifyGetKey>()

  const cached = (key: string): boolean => {
    const exp = verified.get(key)
    if (exp === undefined) return false
    if (exp > Date.now()) return true
    verified.delete(key)
    return false
  }
  const remember = (key: string, expMs: number) => {
    if (verified.size >= MAX_CACHE) verified.delete(verified.keys().next().value as string)
    verified.set(key, expMs)
  }

  // An issuer's keys: from the profile's jwks_url, or found through OIDC discovery (retried after a failure).
  const keysFor = (o: NonNullable<ProfileSnapshot['oidc']>): JWTVerifyGetKey => {
    const cacheKey = o.jwks_url ?? `discovery ${o.issuer}`
    let keys = jwks.get(cacheKey)
    if (keys !== undefined) return keys
    if (o.jwks_url != null) keys = createRemoteJWKSet(new URL(o.jwks_url))
    else {
      let found: Promise<JWTVerifyGetKey> | null = null
      keys = async (header, token) => {
        found ??= discoverJwksUrl(o.issuer).then(d => createRemoteJWKSet(new URL(d.jwksUri)), (err: Error) => { found = null; throw err })
        return await (await found)(header, token)
      }
    }
    if (jwks.size >= MAX_CACHE) jwks.delete(jwks.keys().next().value as string)
    jwks.set(cacheKey, keys)
    return keys
  }

  const bearer = (h: string | undefined): string | null => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h ?? '')
    return m?.[1] ?? null
  }

  /** Null when the credentials prove the profile; a promise only when a token must be verified (not cached). */
  function verifyCredential (p: ProfileSnapshot, call: CallIdentity): AppError | null | Promise<AppError | null> {
    switch (p.auth_type) {
      case 'none': return null
      case 'mtls': {
        const fp = (call.certFingerprint ?? '').replace(/:/g, '').toLowerCase()
        const want = (p.mtls_fingerprint ?? '').replace(/:/g, '').toLowerCase()
        return fp !== '' && fp === want ? null : unauthorized('A client certificate matching this profile is required.')
      }
      case 'api_key': {
        const token = bearer(call.authorization)
        if (token === null) return unauthorized('Send the profile API key as Authorization: Bearer <key>.')
        // Keys that passed are remembered per profile version, so a repeat costs a lookup instead of a hash.
        const key = `${p.id}:${p.version}:${token}`
        if (cached(key)) return null
        const have = Buffer.from(hashApiKey(token), 'hex')
        const want = Buffer.from(p.api_key_hash ?? '', 'hex')
        if (want.length !== have.length || !timingSafeEqual(have, want)) return unauthorized('The API key is not valid for this profile.')
        remember(key, Number.MAX_SAFE_INTEGER)
        return null
      }
      case 'jwt':
      case 'oidc': {
        const token = bearer(call.authorization)
        if (token === null) return unauthorized('Send a token as Authorization: Bearer <token>.')
        const key = `${p.id}:${p.version}:${token}`
        if (cached(key)) return null
        return verifyToken(p, token, key)
      }
    }
  }

  async function verifyToken (p: ProfileSnapshot, token: string, key: string): Promise<AppError | null> {
    try {
      let exp: number | undefined
      if (p.auth_type === 'jwt') {
        if (p.jwt_secret === null) return unauthorized('This profile has no signing secret.')
        const r = await jwtVerify(token, new TextEncoder().encode(p.jwt_secret), { algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: CLOCK_SKEW_S })
        exp = r.payload.exp
      } else {
        const o = p.oidc
        if (o === null) return unauthorized('This profile has no OIDC settings.')
        const r = await jwtVerify(token, keysFor(o), {
          issuer: o.issuer, audience: o.audience ?? undefined, requiredClaims: ['exp'], clockTolerance: CLOCK_SKEW_S, algorithms: ALGORITHMS
        })
        exp = r.payload.exp
      }
      remember(key, Math.min((exp ?? 0) * 1000, Date.now() + 5 * 60_000))
      return null
    } catch (err) {
      const code = (err as { code?: string }).code
      // The issuer's keys could not be fetched (network, discovery, timeout): the caller is not at fault.
      if (code === undefined || code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC' || code === 'ERR_JWKS_INVALID') return serviceUnavailable('The identity provider of this profile could not be reached; retry shortly.', 5)
      return unauthorized(code === 'ERR_JWT_EXPIRED' ? 'The token has expired.' : 'The token is not valid for this profile.')
    }
  }

  /** What the credentials being right still leaves to check: client status, collection, method, address. */
  const admit = (p: ProfileSnapshot, call: CallIdentity): Principal | AppError => {
    if (p.client_status !== 'active') return forbidden('This client is suspended.')
    if (call.collectionId !== null && !p.collection_ids.includes(call.collectionId)) return forbidden('This profile may not call this API.')
    if (call.collectionId !== null && p.allowed_methods !== null && p.allowed_methods.length > 0 && !p.allowed_methods.includes(call.method)) {
      return forbidden(`This profile may not use ${call.method} here.`)
    }
    if (p.ip_allowlist !== null && p.ip_allowlist.length > 0 && !p.ip_allowlist.some(c => cidrContains(c, call.remoteIp))) {
      return forbidden('Calls from this address are not allowed for this profile.')
    }
    return { client_id: p.client_id, profile_id: p.id, policy_id: p.policy_id }
  }

  return {
    /**
     * Checks one call against the snapshot: the principal or an AppError to answer, at once
     * unless a token must be verified (first sight of a jwt or oidc token).
     */
    authenticate (profiles: ReadonlyMap<string, ProfileSnapshot>, call: CallIdentity): Principal | AppError | Promise<Principal | AppError> {
      if (call.clientId === undefined || call.profileId === undefined) {
        return unauthorized('This API needs X-Client-ID and X-Profile-ID headers with your credentials.')
      }
      const p = profiles.get(call.profileId)
      if (p === undefined || p.client_id !== call.clientId) return unauthorized('Unknown client or profile.')
      const bad = verifyCredential(p, call)
      if (bad instanceof Promise) return bad.then(b => b ?? admit(p, call))
      return bad ?? admit(p, call)
    },
    /** Forgets cached verifications (e.g. after a rotation). */
    clear () { verified.clear() }
  }
}

export type ProfileAuthenticator = ReturnType<typeof createProfileAuthenticator>
