/**
 * GATEWAY_THREADS=2 with the memory response cache: one cache for the process, held by the main
 * thread and asked by the other gateway thread. Each request opens its own connection, so the
 * kernel spreads them over both threads (gatehouse_gateway_thread_requests_total shows it).
 * Checked: one backend request for many clients, one after the other and at once, every later
 * answer a hit; a purge through the management API reaches that one cache; Vary variants are
 * shared; hits and misses are counted once at /metrics; a crashed and restarted thread still
 * serves the same entries.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { threadedClient } from '../../helpers/threads.js'
import { eventually } from '../../helpers/wait.js'

t.setTimeout(600_000)

async function client (s: Service) {
  const c = await threadedClient(s)
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const r = await c.call(path, headers)
    return { status: r.status, cache: r.headers.get('cache-status') ?? '', body: JSON.parse(r.body) as { n: number, lang: string | null } }
  }
  return { ...c, call, perThread: async () => c.perThread(await c.metrics()) }
}

t.test('two gateway threads share one memory response cache', async t => {
  let n = 0
  const backend = await startBackend(t, (req, res) => {
    n++
    const vary = req.url!.includes('vary')
    res.writeHead(200, { 'content-type': 'application/json', ...(vary ? { vary: 'Accept-Language' } : {}) })
      .end(JSON.stringify({ n, lang: vary ? req.headers['accept-language'] ?? null : null }))
  })
  const config = loadConfig({
    GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '2', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
    DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', SHED_EVENT_LOOP_DELAY_MS: '0'
  })
  const s = await start(config, { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const c = await client(s)
  const coll = await c.api('POST', '/collections', { name: 'open', base_path: '/open', upstream_url: backend.url, auth_required: false })
  const p = await c.api('POST', '/proxies', { collection_id: coll.id, name: 'cached', methods: ['GET'], path: '/*', target_path: '/*', status: 'published', cache: { ttl_s: 600, vary: [], shared: true } })
  const seenBy = (a: number[], b: number[]) => [b[0]! - a[0]!, b[1]! - a[1]!]

  // Many clients, one backend request: every answer after the first is a hit, whichever thread serves it.
  let before = await c.perThread()
  const first = await c.call('/open/a')
  t.equal(first.cache, 'gatehouse; fwd=uri-miss; stored')
  const later = []
  for (let i = 0; i < 40; i++) later.push(await c.call('/open/a'))
  t.same(later.filter(r => !r.cache.startsWith('gatehouse; hit;')), [], 'every later answer is a hit')
  t.ok(later.every(r => r.status === 200 && r.body.n === first.body.n), 'with the first answer')
  t.equal(n, 1, 'the backend was asked once')
  t.ok(await eventually(async () => seenBy(before, await c.perThread()).every(x => x > 0)), 'both threads served them')
  // At once (a thread asks for the lookups of a turn in one message).
  const burst = await Promise.all(Array.from({ length: 32 }, async () => await c.call('/open/a')))
  t.same(burst.filter(r => !r.cache.startsWith('gatehouse; hit;') || r.body.n !== first.body.n), [], '32 concurrent requests: hits of the first answer')
  t.equal(n, 1, 'still one backend request')

  // Counted once for the process.
  const hit = `gatehouse_response_cache_requests_total{proxy_id="${p.id}",result="hit"}`
  const miss = `gatehouse_response_cache_requests_total{proxy_id="${p.id}",result="miss"}`
  t.ok(await eventually(async () => c.sample(await c.metrics(), hit) === 72), '72 hits at /metrics')
  let m = await c.metrics()
  t.equal(c.sample(m, miss), 1, 'one miss')
  t.equal(c.sample(m, `gatehouse_response_cache_stored_total{proxy_id="${p.id}"}`), 1, 'one stored answer')
  t.equal(c.sample(m, 'gatehouse_response_cache_entries'), 1, 'one entry in the process')
  t.ok(c.sample(m, 'gatehouse_response_cache_bytes') > 0)

  // A purge answered by the management API has emptied the one cache.
  await c.api('DELETE', `/proxies/${p.id}/cache`)
  t.equal(c.sample(await c.metrics(), 'gatehouse_response_cache_entries'), 0, 'no entry after the purge')
  const refetched = await c.call('/open/a')
  t.equal(refetched.cache, 'gatehouse; fwd=uri-miss; stored', 'the next request reaches the backend')
  t.equal(n, 2)
  before = await c.perThread()
  const afterPurge = []
  for (let i = 0; i < 24; i++) afterPurge.push((await c.call('/open/a')).cache)
  t.same(afterPurge.filter(x => !x.startsWith('gatehouse; hit;')), [], 'then hits again')
  t.equal(n, 2, 'the backend was asked once more, only')
  t.ok(await eventually(async () => seenBy(before, await c.perThread()).every(x => x > 0)), 'on both threads')

  // Vary: the backend's variants are shared across threads.
  const langs = ['en', 'fr', 'en', 'fr', 'de']
  const variants = new Map<string, number>()
  for (let i = 0; i < 40; i++) {
    const lang = langs[i % langs.length]!
    const r = await c.call('/open/l?vary=1', { 'accept-language': lang })
    t.equal(r.body.lang, lang, `the ${lang} variant`)
    const seen = variants.get(lang)
    if (seen === undefined) variants.set(lang, r.body.n)
    else {
      t.equal(r.body.n, seen, `the ${lang} variant is the stored one`)
      t.match(r.cache, /^gatehouse; hit;/)
    }
  }
  t.equal(n, 5, 'one backend request per variant')

  // A thread that crashed and was started again serves the same entries.
  const restarted = s.gatewayThreads!.restarted(1)
  s.gatewayThreads!.crash(1)
  await restarted
  before = await c.perThread()
  const afterRestart = []
  for (let i = 0; i < 24; i++) afterRestart.push((await c.call('/open/a')).cache)
  t.same(afterRestart.filter(x => !x.startsWith('gatehouse; hit;')), [], 'hits after a thread restart')
  t.equal(n, 5, 'no backend request')
  t.ok(await eventually(async () => seenBy(before, await c.perThread())[1]! > 0), 'the restarted thread served some')
  m = await c.metrics()
  t.equal(c.sample(m, 'gatehouse_response_cache_entries'), 5, 'the entry, a Vary note and its three variants')
})

t.test('one gateway thread: the cache stays in the gateway\'s thread', async t => {
  let n = 0
  const backend = await startBackend(t, (_req, res) => { n++; res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n, lang: null })) })
  const config = loadConfig({
    GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
    DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory'
  })
  const s = await start(config, { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const c = await client(s)
  t.equal(s.gatewayThreads, null, 'no gateway threads')
  const coll = await c.api('POST', '/collections', { name: 'open', base_path: '/open', upstream_url: backend.url, auth_required: false })
  const p = await c.api('POST', '/proxies', { collection_id: coll.id, name: 'cached', methods: ['GET'], path: '/*', target_path: '/*', status: 'published', cache: { ttl_s: 600, vary: [], shared: true } })
  t.equal((await c.call('/open/a')).cache, 'gatehouse; fwd=uri-miss; stored')
  for (let i = 0; i < 5; i++) t.match((await c.call('/open/a')).cache, /^gatehouse; hit;/)
  await c.api('DELETE', `/proxies/${p.id}/cache`)
  t.equal((await c.call('/open/a')).cache, 'gatehouse; fwd=uri-miss; stored', 'purged')
  t.equal(n, 2)
  t.equal(c.sample(await c.metrics(), `gatehouse_response_cache_requests_total{proxy_id="${p.id}",result="hit"}`), 5)
})
