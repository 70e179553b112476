/**
 * The two /api/v1 routes that answer without a token (docs/auth.md, docs/spec-deviations.md):
 * a sign-in page reads the issuer from /auth/config, and checks the local issuer's tokens
 * against /auth/jwks.json, before it holds a token. Every other /api/v1 route wants one.
 */
import t from 'tap'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { startManagement } from '../../helpers/management.js'

t.test('auth/config and auth/jwks.json answer without a token; the rest of /api/v1 does not', async t => {
  const m = await startManagement(t)
  const config = await m.call('GET', '/api/v1/auth/config', { role: null })
  t.equal(config.status, 200)
  t.match(config.body, { issuer: 'gatehouse-local', local_issuer: true, roles_claim: 'roles', scopes: ['openid', 'profile', 'email'] })
  t.notOk('keys' in config.body || 'private' in config.body, 'no secret in the sign-in settings')

  const jwks = await m.call('GET', '/api/v1/auth/jwks.json', { role: null })
  t.equal(jwks.status, 200)
  t.equal(jwks.body.keys.length, 1)
  t.notOk('d' in jwks.body.keys[0], 'the public key only')
  const token = await m.token('viewer', 'reader')
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks.body), { issuer: 'gatehouse-local' })
  t.equal(payload.sub, 'reader', 'the published key verifies the issuer\'s tokens')

  const stale = await m.call('GET', '/api/v1/auth/config', { role: null, headers: { authorization: 'Bearer expired.or.garbage' } })
  t.equal(stale.status, 200, 'a page holding a stale token can still read how to sign in again')

  for (const path of ['/api/v1/collections', '/api/v1/proxies', '/api/v1/credentials', '/api/v1/audit-logs', '/api/v1/copilot/thread']) {
    const r = await m.call('GET', path, { role: null })
    t.equal(r.status, 401, `${path} needs a token`)
    t.equal(r.body.error.code, 'unauthorized')
  }
})
