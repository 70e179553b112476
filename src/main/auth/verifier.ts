/**
 * Management authentication: `Authorization: Bearer <JWT>` checked against the
 * issuer's JWKS (OIDC discovery or OIDC_JWKS_URL), or the built-in local issuer.
 * Issuer, `exp` and (when set) audience are required; asymmetric algorithms only.
 */
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose'
import { AppError, invalidToken, unauthorized } from '../../common/errors.js'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { LOCAL_AUDIENCE, LOCAL_ISSUER, openLocalIssuer, type LocalIssuer } from './local-issuer.js'
import { claimAt, highestRole, type Role } from './roles.js'

export interface User {
  sub: string
  role: Role | null
  /** When the token expires (epoch seconds): long-lived streams end then. */
  exp?: number
}

export interface Auth {
  mode: 'local' | 'oidc'
  issuer: string
  audience: string
  local: LocalIssuer | null
  /** Origins the console calls from the browser to sign in (the issuer's, its token endpoint's once discovered). */
  browserOrigins (): readonly string[]
  /** Verifies an Authorization header value; throws 401 AppErrors. */
  verify (authorization: string | undefined): Promise<User>
}

/** Asymmetric JWS algorithms accepted from an external issuer (never HS*, so a public key cannot serve as an HMAC secret). */
export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

type AuthConfig = Pick<Config, 'OIDC_ISSUER' | 'OIDC_JWKS_URL' | 'OIDC_AUDIENCE' | 'OIDC_ROLES_CLAIM' | 'DATA_DIR'> & Partial<Pick<Config, 'OIDC_MAX_TOKEN_LIFETIME_S'>>

/** Clock difference tolerated between the issuer and this service for `iat`. */
export const CLOCK_SKEW_S = 60

/** The issuer's JWKS address from its OIDC discovery document. */
export async function discoverJwksUrl (issuer: string): Promise<{ jwksUri: string, issuer: string, tokenEndpoint: string | null }> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
  if (!res.ok) throw new Error(`OIDC discovery at ${url} answered ${res.status}`)
  const doc = await res.json() as { jwks_uri?: string, issuer?: string, token_endpoint?: string }
  if (typeof doc.jwks_uri !== 'string') throw new Error(`OIDC discovery at ${url} has no jwks_uri`)
  return { jwksUri: doc.jwks_uri, issuer: doc.issuer ?? issuer, tokenEndpoint: typeof doc.token_endpoint === 'string' ? doc.token_endpoint : null }
}

export async function createAuth (config: AuthConfig, logger: Logger): Promise<Auth> {
  let keys: JWTVerifyGetKey
  let issuer: string
  let audience = config.OIDC_AUDIENCE
  let local: LocalIssuer | null = null
  const issuerOrigin = config.OIDC_ISSUER === '' ? null : originOf(config.OIDC_ISSUER)
  const origins: string[] = issuerOrigin === null ? [] : [issuerOrigin]
  if (config.OIDC_ISSUER === '' && config.OIDC_JWKS_URL === '') {
    local = await openLocalIssuer(config.DATA_DIR)
    keys = createLocalJWKSet({ keys: [local.publicJwk] })
    issuer = LOCAL_ISSUER
    audience = LOCAL_AUDIENCE
  } else if (config.OIDC_JWKS_URL !== '') {
    keys = createRemoteJWKSet(new URL(config.OIDC_JWKS_URL))
    issuer = config.OIDC_ISSUER
  } else {
    // Discovery is retried on first use if the issuer is down at start.
    issuer = config.OIDC_ISSUER
    let remote: JWTVerifyGetKey | null = null
    const discover = async () => {
      const d = await discoverJwksUrl(config.OIDC_ISSUER)
      const token = d.tokenEndpoint === null ? null : originOf(d.tokenEndpoint)
      if (token !== null && !origins.includes(token)) origins.push(token)
      return d
    }
    keys = async (header, token) => {
      if (remote === null) remote = createRemoteJWKSet(new URL((await discover()).jwksUri))
      return await remote(header, token)
    }
    // Early, so that the console's first sign-in may call a token endpoint on another origin.
    void discover().then(d => { remote ??= createRemoteJWKSet(new URL(d.jwksUri)) }, () => {})
  }

  const maxLifetime = config.OIDC_MAX_TOKEN_LIFETIME_S ?? 86400
  return {
    mode: local !== null ? 'local' : 'oidc',
    issuer,
    audience,
    local,
    browserOrigins: () => origins,
    async verify (authorization) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
      if (m === null) throw unauthorized('A bearer token is required: send Authorization: Bearer <token>.')
      try {
        const { payload } = await jwtVerify(m[1]!, keys, { // group 1 is not optional
          algorithms: ALGORITHMS,
          issuer: issuer === '' ? undefined : issuer,
          audience: audience === '' ? undefined : audience,
          requiredClaims: ['exp', 'sub']
        })
        const now = Math.floor(Date.now() / 1000)
        if (typeof payload.iat === 'number' && payload.iat > now + CLOCK_SKEW_S) throw invalidToken('The token claims to be issued in the future; check the issuer\'s clock.')
        const lifetime = (payload.exp as number) - (typeof payload.iat === 'number' ? payload.iat : now)
        if (lifetime > maxLifetime) throw invalidToken(`The token lives longer than the ${maxLifetime} s allowed (OIDC_MAX_TOKEN_LIFETIME_S); ask for a shorter-lived token.`)
        return { sub: String(payload.sub), role: highestRole(claimAt(payload, config.OIDC_ROLES_CLAIM)), exp: payload.exp as number }
      } catch (err) {
        if (err instanceof AppError) throw err
        const code = (err as { code?: string }).code ?? ''
        if (code === 'ERR_JWT_EXPIRED') throw invalidToken('The token has expired; sign in again.')
        if (code === 'ERR_JOSE_NOT_SUPPORTED' || code === 'ERR_JOSE_ALG_NOT_ALLOWED') throw invalidToken('The token is signed with an algorithm that is not accepted.')
        if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') {
          throw invalidToken(local !== null
            ? 'The token was signed by a key this service does not know: the token command must run with the same DATA_DIR as this server (it signs with the key kept there).'
            : 'The token was signed by a key the issuer\'s JWKS does not list (another issuer, or a rotated key).')
        }
        if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') throw invalidToken(`The token was refused: ${(err as Error).message}.`)
        if (code === '' || code === 'ERR_JWKS_TIMEOUT') logger.warn({ err: (err as Error).message }, 'management token verification failed')
        throw invalidToken('The token is not valid.')
      }
    }
  }
}

/** The origin of a URL, or null when it is not one. */
function originOf (url: string): string | null {
  try { return new URL(url).origin } catch { return null }
}
