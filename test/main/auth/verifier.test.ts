import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { createAuth } from '../../../src/main/auth/verifier.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

/** A real OIDC issuer on loopback: discovery document and JWKS. */
async function startIssuer (t: { teardown (fn: () => unknown): void }) {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const jwk: JWK = { ...await exportJWK(publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  let hits = 0
  const server = http.createServer((req, res) => {
    hits++
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    if (req.url === '/.well-known/openid-configuration') {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/keys` }))
    } else if (req.url === '/keys') {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ keys: [jwk] }))
    } else { res.statusCode = 404; res.end() }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const sign = async (claims: Record<string, unknown>, opts: { exp?: string | null, iss?: string, aud?: string, alg?: string, key?: any } = {}) => {
    let jwt = new SignJWT(claims).setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: 'k1' }).setIssuedAt(claims.iat as number | undefined).setSubject('alice')
      .setIssuer(opts.iss ?? issuer)
    if (opts.aud !== undefined) jwt = jwt.setAudience(opts.aud)
    if (opts.exp !== null) jwt = jwt.setExpirationTime(opts.exp ?? '5m')
    return await jwt.sign(opts.key ?? privateKey)
  }
  return { issuer, sign, hits: () => hits }
}

t.test('OIDC discovery: issuer, audience, exp, algorithms, roles', async t => {
  const idp = await startIssuer(t)
  const config = loadConfig({ OIDC_ISSUER: idp.issuer, OIDC_AUDIENCE: 'gatehouse', OIDC_ROLES_CLAIM: 'realm_access.roles', DATA_DIR: await createTempDir(t) })
  const auth = await createAuth(config, silentLogger)
  t.equal(auth.mode, 'oidc')
  const ok = await idp.sign({ realm_access: { roles: ['viewer', 'editor'] } }, { aud: 'gatehouse' })
  t.match(await auth.verify(`Bearer ${ok}`), { sub: 'alice', role: 'editor' })
  t.ok(idp.hits() >= 2, 'discovery and JWKS were fetched')

  const refused = async (token: string, re: RegExp, name: string) => {
    await t.rejects(auth.verify(`Bearer ${token}`), { status: 401, message: re }, name)
  }
  await refused(await idp.sign({}, { aud: 'other' }), /refused|not valid/, 'wrong audience')
  await refused(await idp.sign({}, { aud: 'gatehouse', iss: 'https://evil.example' }), /refused|not valid/, 'wrong issuer')
  await refused(await idp.sign({}, { aud: 'gatehouse', exp: '-1m' }), /expired/, 'expired')
  await refused(await idp.sign({}, { aud: 'gatehouse', exp: null }), /refused|not valid/, 'no exp')
  const hs = new TextEncoder().encode('x'.repeat(32))
  await refused(await idp.sign({}, { aud: 'gatehouse', alg: 'HS256', key: hs }), /algorithm|not valid/, 'HS256 refused')
  const other = await generateKeyPair('RS256')
  await refused(await idp.sign({}, { aud: 'gatehouse', key: other.privateKey }), /signed by a key the issuer's JWKS does not list/, 'unknown key')
  await t.rejects(auth.verify(undefined), { status: 401, code: 'unauthorized' }, 'missing header')
  await t.rejects(auth.verify('Basic abc'), { status: 401, code: 'unauthorized' }, 'not a bearer token')
  const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x', iss: idp.issuer, aud: 'gatehouse', exp: 9999999999 })).toString('base64url')}.`
  await refused(none, /algorithm|not valid/, 'alg none refused')
  const noRole = await idp.sign({ realm_access: { roles: ['superuser'] } }, { aud: 'gatehouse' })
  t.match(await auth.verify(`Bearer ${noRole}`), { sub: 'alice', role: null }, 'unknown roles carry no role')
})

t.test('OIDC_JWKS_URL directly, roles from a string claim', async t => {
  const idp = await startIssuer(t)
  const config = loadConfig({ OIDC_JWKS_URL: `${idp.issuer}/keys`, OIDC_ISSUER: idp.issuer, DATA_DIR: await createTempDir(t) })
  const auth = await createAuth(config, silentLogger)
  const token = await idp.sign({ roles: 'viewer admin' })
  t.match(await auth.verify(`Bearer ${token}`), { sub: 'alice', role: 'admin' })
})

t.test('the local issuer signs tokens its verifier accepts; keys persist in DATA_DIR', async t => {
  const dataDir = await createTempDir(t)
  const config = loadConfig({ DATA_DIR: dataDir })
  const a = await createAuth(config, silentLogger)
  t.equal(a.mode, 'local')
  const token = await a.local!.sign({ sub: 'bob', role: 'viewer', ttlSeconds: 60 })
  const b = await createAuth(config, silentLogger)
  t.match(await b.verify(`Bearer ${token}`), { sub: 'bob', role: 'viewer' }, 'a restarted service accepts earlier tokens')
  const elsewhere = await createAuth(loadConfig({ DATA_DIR: await createTempDir(t) }), silentLogger)
  await t.rejects(elsewhere.verify(`Bearer ${token}`), { status: 401, message: /signed by a key this service does not know.*same DATA_DIR/ }, 'another key refuses it, saying why')
})

t.test('tokens issued in the future or living too long are refused; a refused token gets error="invalid_token"', async t => {
  const idp = await startIssuer(t)
  const config = loadConfig({ OIDC_ISSUER: idp.issuer, DATA_DIR: await createTempDir(t), OIDC_MAX_TOKEN_LIFETIME_S: '3600' })
  const auth = await createAuth(config, silentLogger)
  const now = Math.floor(Date.now() / 1000)
  t.match(await auth.verify(`Bearer ${await idp.sign({ iat: now + 30 }, { exp: '50m' })}`), { sub: 'alice', role: null }, 'a small clock skew passes')
  await t.rejects(auth.verify(`Bearer ${await idp.sign({ iat: now + 600 }, { exp: '50m' })}`), { status: 401, message: /issued in the future/ })
  await t.rejects(auth.verify(`Bearer ${await idp.sign({}, { exp: '2h' })}`), { status: 401, message: /lives longer than the 3600 s allowed/ })
  const expired = await auth.verify(`Bearer ${await idp.sign({}, { exp: '-1m' })}`).catch((e: any) => e)
  t.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token"', 'a refused token')
  const missing = await auth.verify(undefined).catch((e: any) => e)
  t.equal(missing.headers['www-authenticate'], 'Bearer', 'no token: a plain challenge')
})
