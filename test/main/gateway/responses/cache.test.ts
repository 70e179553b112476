import http from 'node:http'
import zlib from 'node:zlib'
import t, { type Test } from 'tap'
import type { ProfileSnapshot } from '../../../../src/main/access/profile-auth.js'
import { createMemoryLimiter } from '../../../../src/main/cache/memory-limiter.js'
import { profile, startAccessGateway } from '../../../helpers/access.js'
import { collection, proxy, startBackend, startGateway } from '../../../helpers/gateway.js'

const call = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { connection: 'close', 'accept-encoding': 'identity', ...(init.headers as Record<string, string> ?? {}) } })
  return { status: res.status, headers: res.headers, text: await res.text() }
}
const sleep = async (ms: number) => await new Promise(resolve => setTimeout(resolve, ms))

/** A backend that numbers its answers, so a test can tell a cached answer from a fresh one. */
async function numbered (t: Test, delayMs = 0) {
  let n = 0
  return await startBackend(t, (req, res) => {
    const u = new URL(req.url!, 'http://x')
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    const cc = u.searchParams.get('cc')
    if (cc !== null) headers['cache-control'] = cc
    const vary = u.searchParams.get('vary')
    if (vary !== null) headers.vary = vary
    const body = JSON.stringify({ n: ++n, path: u.pathname, lang: req.headers['accept-language'] ?? null, pad: 'x'.repeat(Number(u.searchParams.get('pad') ?? 0)) })
    headers['content-length'] = String(Buffer.byteLength(body))
    setTimeout(() => res.writeHead(200, headers).end(body), delayMs)
  })
}

t.test('a hit is served without a backend call, says so, and HEAD is served from the GET', async t => {
  const backend = await numbered(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*', methods: ['GET', 'POST'], cache: { ttl_s: 60, vary: [], shared: false } })])

  let r = await call(`${url}/api/items?page=1`)
  t.equal(r.headers.get('cache-status'), 'gatehouse; fwd=uri-miss; stored')
  t.equal(JSON.parse(r.text).n, 1)
  r = await call(`${url}/api/items?page=1`)
  t.match(r.headers.get('cache-status'), /^gatehouse; hit; ttl=(60|59)$/)
  t.equal(JSON.parse(r.text).n, 1, 'the stored answer')
  const stored = r.text
  t.match(r.headers.get('age'), /^\d+$/)
  t.equal(r.headers.get('content-type'), 'application/json')
  t.equal(backend.seen.length, 1, 'no backend call for the hit')

  r = await call(`${url}/api/items?page=2`)
  t.equal(JSON.parse(r.text).n, 2, 'another query is another entry')
  r = await call(`${url}/api/items?page=1`, { method: 'HEAD' })
  t.equal(r.status, 200)
  t.match(r.headers.get('cache-status'), /^gatehouse; hit/, 'HEAD from the cached GET')
  t.equal(Number(r.headers.get('content-length')), Buffer.byteLength(stored), 'with the GET\'s length')
  r = await call(`${url}/api/items?page=9`, { method: 'HEAD' })
  t.equal(r.headers.get('cache-status'), 'gatehouse; fwd=uri-miss', 'a HEAD miss is forwarded, not stored')
  t.equal(backend.seen.at(-1)!.method, 'HEAD')
  r = await call(`${url}/api/items?page=1`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(r.headers.get('cache-status'), 'gatehouse; fwd=bypass')
  t.equal(JSON.parse(r.text).n, 4)
  r = await call(`${url}/nowhere`)
  t.equal(r.headers.get('cache-status'), null, 'only answers of cached proxies carry it')

  // A hit is compressed for a client that accepts it, from the same entry.
  const big = await call(`${url}/api/big?pad=5000`)
  t.equal(big.headers.get('cache-status'), 'gatehouse; fwd=uri-miss; stored')
  const gz = await new Promise<{ headers: http.IncomingHttpHeaders, body: Buffer }>((resolve, reject) => {
    http.get(`${url}/api/big?pad=5000`, { agent: false, headers: { 'accept-encoding': 'gzip', connection: 'close' } }, res => {
      const chunks: Buffer[] = []; res.on('data', ch => chunks.push(ch)); res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.match(gz.headers['cache-status'], /hit/)
  t.equal(zlib.gunzipSync(gz.body).toString(), big.text)

  // A configuration change of the proxy drops its entries.
  gateway.setRoutes([c], [proxy(c, { id: 'changed', path: '/*', target_path: '/*', version: 2, cache: { ttl_s: 60, vary: [], shared: false } })])
  r = await call(`${url}/api/items?page=1`)
  t.equal(r.headers.get('cache-status'), 'gatehouse; fwd=uri-miss; stored', 'after a change the entry is gone')
})

t.test('Cache-Control and Expires: no-store and private are not kept, max-age expires and refetches', async t => {
  const backend = await numbered(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*', cache: { ttl_s: 600, vary: [], shared: true } })])
  for (const cc of ['no-store', 'private, max-age=60', 'no-cache', 'max-age=0']) {
    const q = `/api/x?cc=${encodeURIComponent(cc)}`
    const a = await call(url + q)
    const b = await call(url + q)
    t.equal(b.headers.get('cache-status'), 'gatehouse; fwd=uri-miss', `${cc}: not stored`)
    t.not(JSON.parse(a.text).n, JSON.parse(b.text).n, `${cc}: each request reaches the backend`)
  }
  const q = `/api/x?cc=${encodeURIComponent('public, max-age=1')}`
  const first = JSON.parse((await call(url + q)).text).n
  t.match((await call(url + q)).headers.get('cache-status'), /^gatehouse; hit; ttl=1$/, 'max-age wins over the proxy ttl')
  await sleep(1100)
  const r = await call(url + q)
  t.equal(r.headers.get('cache-status'), 'gatehouse; fwd=stale; stored', 'expired: refetched')
  t.not(JSON.parse(r.text).n, first)
  const sm = `/api/x?cc=${encodeURIComponent('max-age=600, s-maxage=1')}`
  await call(url + sm)
  await sleep(1100)
  t.equal((await call(url + sm)).headers.get('cache-status'), 'gatehouse; fwd=stale; stored', 's-maxage wins over max-age for a shared cache')
})

t.test('vary: the proxy\'s headers and the backend\'s Vary make separate entries', async t => {
  const backend = await numbered(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*', cache: { ttl_s: 60, vary: ['X-Tenant'], shared: false } })])
  const n = async (path: string, headers: Record<string, string> = {}) => {
    const r = await call(url + path, { headers })
    return { n: JSON.parse(r.text).n, status: r.headers.get('cache-status') }
  }
  const a = await n('/api/t', { 'x-tenant': 'a' })
  t.equal((await n('/api/t', { 'x-tenant': 'a' })).n, a.n)
  t.not((await n('/api/t', { 'x-tenant': 'b' })).n, a.n, 'another tenant, another entry')
  const en = await n('/api/l?vary=Accept-Language', { 'accept-language': 'en' })
  t.same(await n('/api/l?vary=Accept-Language', { 'accept-language': 'en' }), { n: en.n, status: 'gatehouse; hit; ttl=60' })
  const fr = await n('/api/l?vary=Accept-Language', { 'accept-language': 'fr' })
  t.equal(fr.status, 'gatehouse; fwd=vary-miss; stored', 'the backend\'s Vary')
  t.equal((await n('/api/l?vary=Accept-Language', { 'accept-language': 'fr' })).n, fr.n)
  t.equal((await n('/api/l?vary=Accept-Language', { 'accept-language': 'en' })).n, en.n, 'both variants kept')
  t.equal((await n('/api/s?vary=*')).status, 'gatehouse; fwd=uri-miss', 'Vary: * is never kept')
})

t.test('50 concurrent misses make one backend call', async t => {
  const backend = await numbered(t, 300)
  // No load shedding: on a busy test machine a burst could otherwise get 503s that say nothing about the cache.
  const { gateway, url } = await startGateway(t, {}, { SHED_EVENT_LOOP_DELAY_MS: '0' })
  const c = collection({ base_path: '/api', upstream_url: backend.url })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*', cache: { ttl_s: 60, vary: [], shared: false } })])
  const all = await Promise.all(Array.from({ length: 50 }, async () => await call(`${url}/api/hot`)))
  t.equal(backend.seen.length, 1, 'one backend call')
  t.ok(all.every(r => r.status === 200 && JSON.parse(r.text).n === 1), 'every client got its answer')
  const statuses = all.map(r => r.headers.get('cache-status'))
  t.equal(statuses.filter(s => s === 'gatehouse; fwd=uri-miss; stored').length, 1, 'one leader')
  t.equal(statuses.filter(s => s === 'gatehouse; fwd=uri-miss; collapsed').length, 49, 'the others waited for it')

  // Not storable: the waiters then go to the backend themselves (the answer may be theirs alone).
  const priv = await Promise.all(Array.from({ length: 5 }, async () => await call(`${url}/api/p?cc=private`)))
  t.same(priv.map(r => r.status), [200, 200, 200, 200, 200])
  t.equal(new Set(priv.map(r => JSON.parse(r.text).n)).size, 5, 'private answers are never handed to another request')
})

t.test('an authenticated collection\'s answers are not shared between clients unless the proxy says so', async t => {
  const backend = await numbered(t)
  const c = collection({ base_path: '/api', upstream_url: backend.url, auth_required: true })
  const profiles = new Map<string, ProfileSnapshot>([
    ['pa', profile({ id: 'pa', client_id: 'alice', collection_ids: [c.id] })],
    ['pb', profile({ id: 'pb', client_id: 'bob', collection_ids: [c.id] })]
  ])
  const { gateway, url } = await startAccessGateway(t, profiles, new Map(), createMemoryLimiter())
  gateway.setRoutes([c], [
    proxy(c, { path: '/mine', cache: { ttl_s: 60, vary: [], shared: false } }),
    proxy(c, { path: '/public', cache: { ttl_s: 60, vary: [], shared: true } })
  ])
  const as = async (who: 'alice' | 'bob', path: string) => {
    const r = await call(url + path, { headers: { 'x-client-id': who, 'x-profile-id': who === 'alice' ? 'pa' : 'pb' } })
    return { n: JSON.parse(r.text).n as number, status: r.headers.get('cache-status') }
  }
  const a1 = await as('alice', '/api/mine')
  t.equal((await as('alice', '/api/mine')).n, a1.n, 'alice hits her own entry')
  const b1 = await as('bob', '/api/mine')
  t.not(b1.n, a1.n, 'bob does not get alice\'s answer')
  t.equal(b1.status, 'gatehouse; fwd=uri-miss; stored')
  const p1 = await as('alice', '/api/public')
  t.same(await as('bob', '/api/public'), { n: p1.n, status: 'gatehouse; hit; ttl=60' }, 'shared: one entry for every client')
  const refused = await call(`${url}/api/mine`)
  t.equal(refused.status, 401, 'never served to a caller without credentials')
  t.equal(refused.headers.get('cache-status'), 'gatehouse; fwd=bypass')
})
