/** jwt and oidc profiles in depth: a real OIDC issuer on loopback (discovery and JWKS), clock skew, rotation. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'
import t from 'tap'
import { createMemoryLimiter } from '../../../src/main/cache/memory-limiter.js'
import { hashApiKey, type ProfileSnapshot } from '../../../src/main/access/profile-auth.js'
import type { PolicySnapshot } from '../../../src/main/access/policy-limits.js'
import { profile, startAccessGateway } from '../../helpers/access.js'
import { collection, proxy, startBackend } from '../../helpers/gateway.js'
import { freePort } from '../../helpers/ports.js'

t.test('jwt and oidc profiles: accepted tokens and each way of being refused', async t => {
  const backend = await startBackend(t)
  const api = collection({ base_path: '/shop', upstream_url: backend.url, auth_required: true })

  // The issuer publishes a discovery document pointing at its JWKS, as real OIDC providers do.
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'ES256', use: 'sig' }
  const hits: Record<string, number> = {}
  const idp = http.createServer((req, res) => {
    hits[req.url!] = (hits[req.url!] ?? 0) + 1
    res.setHeader('content-type', 'application/json')
    if (req.url === '/realm/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/certs` }))
    else if (req.url === '/realm/certs') res.end(JSON.stringify({ keys: [jwk] }))
    else { res.statusCode = 404; res.end('{}') }
  })
  await new Promise<void>(resolve => idp.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { idp.closeAllConnections(); idp.close(resolve) }))
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/realm`
  const down = `http://127.0.0.1:${await freePort()}/realm`

  const jwtSecret = 's'.repeat(32)
  const profiles = new Map<string, ProfileSnapshot>()
  const add = (p: ProfileSnapshot) => profiles.set(p.id, p)
  add(profile({ id: 'oidc', auth_type: 'oidc', oidc: { issuer, audience: 'shop' }, collection_ids: [api.id] }))
  add(profile({ id: 'oidc-jwks', auth_type: 'oidc', oidc: { issuer, jwks_url: `${issuer}/certs`, audience: null }, collection_ids: [api.id] }))
  add(profile({ id: 'oidc-down', auth_type: 'oidc', oidc: { issuer: down }, collection_ids: [api.id] }))
  add(profile({ id: 'jwt', auth_type: 'jwt', jwt_secret: jwtSecret, collection_ids: [api.id] }))
  add(profile({ id: 'key', auth_type: 'api_key', api_key_hash: hashApiKey('first-key'), collection_ids: [api.id] }))
  const { gateway, url } = await startAccessGateway(t, profiles, new Map<string, PolicySnapshot>(), createMemoryLimiter())
  gateway.setRoutes([api], [proxy(api, { path: '/cart', target_path: '/cart' })])
  const call = async (id: string, token?: string) => {
    const headers: Record<string, string> = { connection: 'close', 'x-client-id': 'acme', 'x-profile-id': id }
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    const res = await fetch(`${url}/shop/cart`, { headers })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text }
  }
  const now = () => Math.floor(Date.now() / 1000)
  const idToken = (claims: { iss?: string, aud?: string, exp?: number | null, key?: CryptoKey | Uint8Array, kid?: string, alg?: string } = {}) => {
    let b = new SignJWT({ sub: 'u1' }).setProtectedHeader({ alg: claims.alg ?? 'ES256', kid: claims.kid ?? 'k1' }).setIssuer(claims.iss ?? issuer).setAudience(claims.aud ?? 'shop')
    if (claims.exp !== null) b = b.setExpirationTime(claims.exp ?? now() + 300)
    return b.sign(claims.key ?? privateKey)
  }

  // oidc, keys found through discovery
  t.equal((await call('oidc', await idToken())).status, 200, 'a token from the issuer, for the audience')
  t.equal((await call('oidc', await idToken({ exp: now() + 200 }))).status, 200, 'another token: the keys are already known')
  t.equal(hits['/realm/.well-known/openid-configuration'], 1, 'discovery is fetched once')
  t.equal(hits['/realm/certs'], 1, 'and the JWKS once')
  t.equal((await call('oidc', await idToken({ exp: now() - 30 }))).status, 200, 'expired within the 60 s clock skew')
  let r = await call('oidc', await idToken({ exp: now() - 600 }))
  t.equal(r.status, 401, 'expired past the skew')
  t.match(r.body.error.message, /expired/)
  t.equal((await call('oidc')).status, 401, 'no token')
  t.equal((await call('oidc', 'not-a-jwt')).status, 401, 'not a JWT')
  t.equal((await call('oidc', await idToken({ aud: 'bank' }))).status, 401, 'another audience')
  t.equal((await call('oidc', await idToken({ iss: 'http://127.0.0.1:1/evil' }))).status, 401, 'another issuer')
  t.equal((await call('oidc', await idToken({ exp: null }))).status, 401, 'no exp')
  const stranger = await generateKeyPair('ES256')
  t.equal((await call('oidc', await idToken({ key: stranger.privateKey }))).status, 401, 'signed by a key the issuer does not publish')
  t.equal((await call('oidc', await idToken({ key: stranger.privateKey, kid: 'k9' }))).status, 401, 'an unknown key id')
  t.equal((await call('oidc', await idToken({ alg: 'HS256', key: new TextEncoder().encode(JSON.stringify(jwk)) }))).status, 401,
    'an HMAC token keyed with the public key is refused (asymmetric algorithms only)')
  t.equal((await call('oidc-jwks', await idToken({ aud: 'anything' }))).status, 200, 'a profile with jwks_url and no audience')
  r = await call('oidc-down', await idToken({ iss: down }))
  t.equal(r.status, 503, 'an issuer that cannot be reached is not the caller\'s fault')
  t.equal(r.body.error.code, 'service_unavailable')
  t.ok(Number(r.headers.get('retry-after')) > 0)

  // jwt: HS256 with the profile's secret
  const hs = (secret: string, exp: number | null, nbf?: number) => {
    let b = new SignJWT({}).setProtectedHeader({ alg: 'HS256' })
    if (exp !== null) b = b.setExpirationTime(exp)
    if (nbf !== undefined) b = b.setNotBefore(nbf)
    return b.sign(new TextEncoder().encode(secret))
  }
  const first = await hs(jwtSecret, now() + 300)
  t.equal((await call('jwt', first)).status, 200)
  t.equal((await call('jwt', await hs(jwtSecret, now() - 30))).status, 200, 'expired within the clock skew')
  t.equal((await call('jwt', await hs(jwtSecret, now() - 120))).status, 401, 'expired past the clock skew')
  t.equal((await call('jwt', await hs(jwtSecret, now() + 300, now() + 600))).status, 401, 'not valid before a time past the skew')
  t.equal((await call('jwt', await hs(jwtSecret, null))).status, 401, 'exp is required')
  t.equal((await call('jwt', await idToken())).status, 401, 'an ES256 token is not an HS256 one')

  // Rotation (a new secret and version, as the management API writes them): cached verifications do not outlive it.
  profiles.set('jwt', { ...profiles.get('jwt')!, version: 2, jwt_secret: 'n'.repeat(32) })
  t.equal((await call('jwt', first)).status, 401, 'a token signed with the old secret fails at once')
  t.equal((await call('jwt', await hs('n'.repeat(32), now() + 300))).status, 200)
  t.equal((await call('key', 'first-key')).status, 200)
  profiles.set('key', { ...profiles.get('key')!, version: 2, api_key_hash: hashApiKey('second-key') })
  t.equal((await call('key', 'first-key')).status, 401, 'the old api key fails at once')
  t.equal((await call('key', 'second-key')).status, 200)
})
