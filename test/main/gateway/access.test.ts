import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import t from 'tap'
import { createMemoryLimiter } from '../../../src/main/cache/memory-limiter.js'
import { hashApiKey, type ProfileSnapshot } from '../../../src/main/access/profile-auth.js'
import { parseCidr } from '../../../src/common/cidr.js'
import type { PolicySnapshot } from '../../../src/main/access/policy-limits.js'
import { profile, startAccessGateway } from '../../helpers/access.js'
import { collection, proxy, startBackend } from '../../helpers/gateway.js'

t.test('client authentication and policies at the gateway', async t => {
  const backend = await startBackend(t)
  const api = collection({ base_path: '/secure', upstream_url: backend.url, auth_required: true })
  const other = collection({ base_path: '/other', upstream_url: backend.url, auth_required: true })
  const open = collection({ base_path: '/open', upstream_url: backend.url, auth_required: false })

  // A real OIDC issuer on loopback for the oidc profile.
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = { ...await exportJWK(publicKey), kid: 'k', alg: 'ES256' }
  const idp = http.createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ keys: [jwk] })) })
  await new Promise<void>(resolve => idp.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { idp.closeAllConnections(); idp.close(resolve) }))
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`

  const profiles = new Map<string, ProfileSnapshot>()
  const add = (p: ProfileSnapshot) => profiles.set(p.id, p)
  add(profile({ id: 'key', auth_type: 'api_key', api_key_hash: hashApiKey('gh_secret'), collection_ids: [api.id], policy_id: 'tight' }))
  add(profile({ id: 'jwt', auth_type: 'jwt', jwt_secret: 'a'.repeat(32), collection_ids: [api.id] }))
  add(profile({ id: 'oidc', auth_type: 'oidc', oidc: { issuer, jwks_url: issuer, audience: 'shop' }, collection_ids: [api.id] }))
  add(profile({ id: 'none', auth_type: 'none', collection_ids: [api.id], allowed_methods: ['GET'], ip_allowlist: [parseCidr('10.0.0.0/8')!] }))
  add(profile({ id: 'bare', auth_type: 'none', collection_ids: [api.id], policy_id: 'quota' }))
  add(profile({ id: 'off', auth_type: 'none', collection_ids: [api.id], policy_id: 'disabled' }))
  add(profile({ id: 'susp', client_id: 'gone', client_status: 'suspended', auth_type: 'none', collection_ids: [api.id] }))
  const policies = new Map<string, PolicySnapshot>([
    ['tight', { id: 'tight', status: 'enabled', rate_limit: { requests: 3, per_seconds: 60 }, quota: null }],
    ['quota', { id: 'quota', status: 'enabled', rate_limit: null, quota: { requests: 2, period: 'day' } }],
    ['disabled', { id: 'disabled', status: 'disabled', rate_limit: { requests: 1, per_seconds: 60 }, quota: null }]
  ])
  const { gateway, port } = await startAccessGateway(t, profiles, policies, createMemoryLimiter())
  gateway.setRoutes([api, other, open], [
    proxy(api, { path: '/items', target_path: '/items', methods: ['GET', 'POST'] }),
    proxy(other, { path: '/items', target_path: '/items' }),
    proxy(open, { path: '/items', target_path: '/items' })
  ])
  const url = `http://127.0.0.1:${port}`
  const call = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(url + path, { method, headers: { connection: 'close', ...headers } })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text }
  }
  const who = (profile: string, client = 'acme') => ({ 'x-client-id': client, 'x-profile-id': profile })

  t.equal((await call('/open/items')).status, 200, 'a collection without auth_required is open')
  let r = await call('/secure/items')
  t.equal(r.status, 401, 'no identity headers')
  t.equal(r.body.error.code, 'unauthorized')
  t.equal((await call('/secure/items', who('nope'))).status, 401, 'unknown profile')
  t.equal((await call('/secure/items', who('key', 'other-client'))).status, 401, 'profile of another client')

  // api_key
  t.equal((await call('/secure/items', who('key'))).status, 401, 'api key missing')
  t.equal((await call('/secure/items', { ...who('key'), authorization: 'Bearer wrong' })).status, 401, 'wrong api key')
  r = await call('/secure/items', { ...who('key'), authorization: 'Bearer gh_secret' })
  t.equal(r.status, 200)
  t.equal(r.headers.get('ratelimit-limit'), '3')
  t.equal(r.headers.get('ratelimit-remaining'), '2')
  t.ok(Number(r.headers.get('ratelimit-reset')) > 0)
  const seen = backend.seen.at(-1)!
  t.notOk('authorization' in seen.headers, 'credentials are not forwarded')
  t.notOk('x-client-id' in seen.headers)
  t.equal((await call('/other/items', { ...who('key'), authorization: 'Bearer gh_secret' })).status, 403, 'collection not granted')
  await call('/secure/items', { ...who('key'), authorization: 'Bearer gh_secret' })
  await call('/secure/items', { ...who('key'), authorization: 'Bearer gh_secret' })
  r = await call('/secure/items', { ...who('key'), authorization: 'Bearer gh_secret' })
  t.equal(r.status, 429, 'the rate limit is spent')
  t.equal(r.body.error.code, 'rate_limited')
  t.ok(Number(r.headers.get('retry-after')) >= 1)
  t.equal(r.headers.get('ratelimit-remaining'), '0')

  // jwt (HS256 with the profile secret, exp required)
  const secret = new TextEncoder().encode('a'.repeat(32))
  const good = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(secret)
  t.equal((await call('/secure/items', { ...who('jwt'), authorization: `Bearer ${good}` })).status, 200)
  t.equal((await call('/secure/items', { ...who('jwt'), authorization: `Bearer ${good}` })).status, 200, 'cached verification')
  // Bodies pass whether the decision waits for a verification (first sight of a token) or is taken at once (cached).
  const fresh = await new SignJWT({ n: 2 }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(secret)
  for (const [label, token] of [['verified now', fresh], ['cached', fresh]]) {
    for (const chunked of [false, true]) {
      const body = `{"label":"${label}","chunked":${String(chunked)}}`
      const res = await fetch(url + '/secure/items', {
        method: 'POST', headers: { ...who('jwt'), authorization: `Bearer ${token}`, connection: 'close' }, duplex: 'half',
        body: chunked ? new Blob([body]).stream() : body
      } as RequestInit)
      await res.text()
      t.equal(res.status, 200, `POST, ${label}, ${chunked ? 'chunked' : 'with a length'}`)
      t.equal(backend.seen.at(-1)!.body, body, 'the backend gets the body')
    }
  }
  const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).sign(secret)
  t.equal((await call('/secure/items', { ...who('jwt'), authorization: `Bearer ${noExp}` })).status, 401, 'exp required')
  const expired = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 600).sign(secret)
  t.equal((await call('/secure/items', { ...who('jwt'), authorization: `Bearer ${expired}` })).status, 401, 'expired')
  const forged = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode('b'.repeat(32)))
  t.equal((await call('/secure/items', { ...who('jwt'), authorization: `Bearer ${forged}` })).status, 401, 'wrong secret')

  // oidc
  const idToken = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k' }).setIssuer(issuer).setAudience('shop').setExpirationTime('5m').sign(privateKey)
  t.equal((await call('/secure/items', { ...who('oidc'), authorization: `Bearer ${idToken}` })).status, 200)
  const wrongAud = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k' }).setIssuer(issuer).setAudience('bank').setExpirationTime('5m').sign(privateKey)
  t.equal((await call('/secure/items', { ...who('oidc'), authorization: `Bearer ${wrongAud}` })).status, 401, 'wrong audience')

  // none, with method and address restrictions
  r = await call('/secure/items', who('none'))
  t.equal(r.status, 403, 'address not in the allowlist')
  t.match(r.body.error.message, /address/)
  t.equal((await call('/secure/items', who('none'), 'POST')).status, 403, 'method not allowed for the profile')
  t.equal((await call('/secure/items', who('susp', 'gone'))).status, 403, 'suspended client')

  // quota per day, and a disabled policy
  t.equal((await call('/secure/items', who('bare'))).status, 200)
  t.equal((await call('/secure/items', who('bare'))).status, 200)
  r = await call('/secure/items', who('bare'))
  t.equal(r.status, 429, 'daily quota spent')
  t.match(r.body.error.message, /daily quota/)
  for (let i = 0; i < 3; i++) t.equal((await call('/secure/items', who('off'))).status, 200, 'a disabled policy limits nothing')
  policies.set('quota', { ...policies.get('quota')!, status: 'disabled' })
  t.equal((await call('/secure/items', who('bare'))).status, 200, 'disabling a policy lifts it at once')
})
