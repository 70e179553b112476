import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, openTestStore, silentLogger, STORE_KINDS } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import net from 'node:net'
import { insertRequestLogs, listRequestLogs } from '../../../src/main/store/request-logs.js'
import { openStore } from '../../../src/main/store/index.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'
import { eventually } from '../../helpers/wait.js'

/** Paths that JSON and PostgreSQL's text type each treat specially (a NUL it refuses, lengths past the column's cut). */
const AWKWARD_PATHS = ['/tab\there', '/line\nbreak\r', '/back\\slash\\N', '/é/日本/😀', '/nul\0byte', '/' + 'x'.repeat(3000), '\\N']

for (const kind of STORE_KINDS) {
  t.test(`request logs and metrics match the traffic (${kind})`, async t => {
    const config = loadConfig({
      GATEWAY_THREADS: '1',
      DATABASE_URL: kind === 'postgres' ? await createTestDatabase(t) : '', DATA_DIR: await createTempDir(t),
      PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent'
    })
    const s = await start(config, { logger: silentLogger })
    t.teardown(() => s.close())
    const backend = await startBackend(t, (req, res) => { res.statusCode = req.url === '/fail' ? 500 : 200; res.end('x'.repeat(10)) })
    const token = await s.issueToken!('alice', 'admin')
    const m = `http://127.0.0.1:${s.managementPort}`
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(m + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await r.text()
      return { status: r.status, body: text.startsWith('{') ? JSON.parse(text) : text }
    }
    const c = (await api('POST', '/api/v1/collections', { name: 'o', base_path: '/o', upstream_url: backend.url, auth_required: false })).body
    const ok = (await api('POST', '/api/v1/proxies', { collection_id: c.id, name: 'ok', methods: ['GET', 'POST'], path: '/ok', status: 'published' })).body
    const bad = (await api('POST', '/api/v1/proxies', { collection_id: c.id, name: 'fail', methods: ['GET'], path: '/fail', status: 'published' })).body
    const g = `http://127.0.0.1:${s.gatewayPort}`
    const ids: string[] = []
    const send = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(g + path, { ...init, headers: { connection: 'close' } })
      await res.text()
      ids.push(res.headers.get('x-request-id')!)
    }
    const startedAt = new Date(Date.now() - 1000).toISOString()
    for (let i = 0; i < 5; i++) await send(`/o/ok?i=${i}`)
    await send('/o/ok', { method: 'POST', body: 'hello' })
    for (let i = 0; i < 2; i++) await send('/o/fail')
    await send('/o/none')

    // Records reach the store in batches, off the request path: wait until all nine are there.
    await eventually(async () => (await api('GET', '/api/v1/request-logs')).body.items.length >= 9, undefined, 100)
    const logs = (await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}`)).body
    t.equal(logs.items.length, 6, 'every request to the proxy is logged')
    t.match(logs.items[5], { collection_id: c.id, proxy_id: ok.id, method: 'GET', path: '/o/ok', status: 200, bytes_out: 10, client_id: null })
    t.type(logs.items[5].request_id, 'string')
    t.type(logs.items[5].duration_ms, 'number')
    t.match(logs.items[0], { method: 'POST', bytes_in: 5 }, 'newest first by default')
    t.same(logs.items.map((x: any) => x.request_id), ids.slice(0, 6).reverse(), 'newest first, in the order the client sent them')
    const oldest = (await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}&order=asc`)).body
    t.same(oldest.items.map((x: any) => x.request_id), ids.slice(0, 6), '?order=asc: oldest first')
    t.same((await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}&order=desc&limit=2`)).body.items.map((x: any) => x.request_id), ids.slice(4, 6).reverse())
    const unknown = await api('GET', '/api/v1/request-logs?sort=desc&proxy=x&order=sideways')
    t.equal(unknown.status, 400, 'unknown query parameters are refused')
    t.match(unknown.body.error.message, /^Unknown query parameters 'sort', 'proxy' \(it takes limit, cursor, order, collection_id.*\); order must be 'asc' or 'desc'\.$/)
    t.same(unknown.body.error.details.map((d: any) => d.field), ['sort', 'proxy', 'order'], 'every problem at once')
    const fails = (await api('GET', '/api/v1/request-logs?status=500')).body
    t.equal(fails.items.length, 2)
    t.ok(fails.items.every((x: any) => x.proxy_id === bad.id))
    t.equal((await api('GET', '/api/v1/request-logs?status=abc')).status, 400)
    t.same(logs.items.map((x: any) => x.request_id).sort(), ids.slice(0, 6).sort(), 'the logged request ids are the ones the client got')
    t.ok(logs.items.every((x: any) => x.bytes_out === 10 && x.status === 200))
    const unmatched = (await api('GET', '/api/v1/request-logs?status=404')).body
    t.equal(unmatched.items.length, 1, 'requests matching no proxy are logged too')
    t.match(unmatched.items[0], { path: '/o/none', proxy_id: null, collection_id: null, request_id: ids[8] })

    // Paging and time filters.
    const seenIds = new Set<string>()
    let cursor: string | null = null
    let pages = 0
    do {
      const pageBody: any = (await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}&limit=4${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body
      for (const x of pageBody.items) seenIds.add(x.request_id)
      cursor = pageBody.next_cursor
      pages++
    } while (cursor !== null && pages < 10)
    t.equal(pages, 2, 'six records in pages of four')
    t.equal(seenIds.size, 6, 'every record exactly once across pages')
    t.equal((await api('GET', `/api/v1/request-logs?until=${encodeURIComponent(startedAt)}`)).body.items.length, 0, 'nothing before the traffic')
    t.equal((await api('GET', `/api/v1/request-logs?since=${encodeURIComponent(startedAt)}&method=post`)).body.items.length, 1)
    t.equal((await api('GET', '/api/v1/request-logs?since=yesterday')).status, 400)

    // Retention: records older than the period are pruned, newer ones stay (the embedded store's
    // files are pruned a segment at a time: request-log-files.test.ts).
    if (kind === 'postgres') {
      await s.requestLogs.insert([{ ...logs.items[5], time: Date.now() - 100 * 3_600_000, proxy_id: 'old' }])
      t.equal((await api('GET', '/api/v1/request-logs?proxy_id=old')).body.items.length, 1)
      t.equal(await s.requestLogs.prune(new Date(Date.now() - config.REQUEST_LOG_RETENTION_HOURS * 3_600_000)), 1)
      t.equal((await api('GET', '/api/v1/request-logs?proxy_id=old')).body.items.length, 0, 'the old record is gone')
      t.equal((await api('GET', `/api/v1/request-logs?proxy_id=${ok.id}`)).body.items.length, 6, 'recent ones stay')
    } else {
      t.ok(fs.readdirSync(path.join(config.DATA_DIR, 'request-log')).some(f => f.endsWith('.ndjson')), 'kept in files beside the embedded store')
    }

    const metrics = (await api('GET', '/api/v1/metrics')).body
    t.equal(metrics.proxies[ok.id].requests, 6)
    t.same(metrics.proxies[bad.id].errors, { '4xx': 0, '5xx': 2 })
    // The windows are whole clock minutes (last_1m is the current one): on a slow run the traffic may straddle a minute's end.
    t.equal(metrics.proxies[ok.id].latency_ms.last_5m.requests, 6)
    t.same(metrics.proxies[ok.id].errors, { '4xx': 0, '5xx': 0 })
    t.type(metrics.proxies[ok.id].latency_ms.last_5m.p99, 'number')
    const prom = await fetch(`${m}/metrics`, { headers: { connection: 'close' } })
    t.match(prom.headers.get('content-type'), /^text\/plain/)
    const samples = parsePrometheus(await prom.text())
    const value = (name: string, labels: Record<string, string>) =>
      samples.find(x => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))?.value
    t.equal(value('gatehouse_proxy_requests_total', { proxy_id: ok.id }), 6)
    t.equal(value('gatehouse_proxy_requests_total', { proxy_id: bad.id }), 2)
    t.equal(value('gatehouse_proxy_errors_total', { proxy_id: bad.id, class: '5xx' }), 2)
    t.equal(value('gatehouse_proxy_errors_total', { proxy_id: ok.id, class: '4xx' }), 0)
    t.equal(value('gatehouse_proxy_duration_ms_count', { proxy_id: ok.id }), 6)
    t.equal(value('gatehouse_proxy_duration_ms_bucket', { proxy_id: ok.id, le: '+Inf' }), 6)
    t.equal(value('gatehouse_request_log_dropped_total', {}), 0, 'nothing dropped')
    t.ok((value('gatehouse_request_log_written_total', {}) ?? 0) >= 9, 'written records are counted')
  })
}

// Both ways a batch reaches PostgreSQL: COPY (the service's) and the INSERT of one JSON parameter
// (for a store without COPY, as the embedded store's table is written in the take-over).
for (const way of ['COPY', 'INSERT'] as const) {
  t.test(`a batch of request records with awkward values is stored as given (postgres, ${way})`, async t => {
    const store = await openTestStore(t, 'postgres')
    t.equal(typeof store.copyFrom, 'function', 'the PostgreSQL store has COPY')
    const target = way === 'COPY' ? store : { query: store.query.bind(store), exec: store.exec.bind(store) }
    const time = Date.UTC(2026, 10, 25, 6, 0, 0, 123)
    const base = { time, request_id: 'r', collection_id: null, proxy_id: 'awkward', client_id: null, profile_id: null, method: 'GET', status: 200, duration_ms: 1.25, upstream_ms: null, bytes_in: 0, bytes_out: 3e9 }
    const astral = '/' + '😀'.repeat(2100)
    await insertRequestLogs(target, [...AWKWARD_PATHS, astral].map((path, i) => ({ ...base, request_id: `r${i}\t${i}`, path })))
    const { rows } = await store.query('SELECT request_id, path, occurred_at, collection_id, upstream_ms, duration_ms, bytes_out FROM request_logs WHERE proxy_id = $1 ORDER BY seq', ['awkward'])
    t.same(rows.map((r: any) => r.path), [...AWKWARD_PATHS.slice(0, 4), '/nulbyte', '/' + 'x'.repeat(2047), '\\N', '/' + '😀'.repeat(2047)],
      'tabs, line breaks, backslashes and any script kept; a NUL left out; paths cut at 2,048 characters (not halfway through one)')
    t.same(rows.map((r: any) => r.request_id), rows.map((_r: any, i: number) => `r${i}\t${i}`), 'every text field carries a tab')
    t.equal(new Date(rows[0].occurred_at).getTime(), time, 'the time to the millisecond')
    t.same(rows.map((r: any) => r.collection_id), rows.map(() => null), 'null stays null')
    t.equal(rows[0].upstream_ms, null)
    t.equal(Number(rows[0].duration_ms), 1.25)
    t.equal(Number(rows[0].bytes_out), 2_000_000_000, 'sizes past the column are capped')
    const listed = await listRequestLogs(store, { limit: 10, order: 'asc' }, { proxy_id: 'awkward' })
    t.same(listed.items.map(r => r.path), rows.map((r: any) => r.path), 'the API lists them as stored')
  })
}

t.test('the request log table: few indexes to write, the client filter still indexed (postgres)', async t => {
  const store = await openTestStore(t, 'postgres')
  const indexes = (await store.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'request_logs' ORDER BY indexname")).rows
  t.same(indexes.map((r: any) => r.indexname), ['request_logs_client_idx', 'request_logs_proxy_idx', 'request_logs_seq_key', 'request_logs_time_brin', 'request_logs_trace_idx'], 'each written row pays for few indexes')
  t.match(indexes[0].indexdef, /WHERE \(client_id IS NOT NULL\)/, 'a request without a client has no entry in the client index')
  t.match(indexes[4].indexdef, /WHERE \(trace_id IS NOT NULL\)/, 'an untraced request has no entry in the trace index')
  const base = { time: Date.now(), collection_id: 'c', proxy_id: 'p', profile_id: null, method: 'GET', path: '/x', status: 200, duration_ms: 1, upstream_ms: 1, bytes_in: 0, bytes_out: 0 }
  await insertRequestLogs(store, Array.from({ length: 3000 }, (_, i) => ({ ...base, request_id: `r${i}`, client_id: i % 1000 === 0 ? 'rare' : null })))
  await store.query('ANALYZE request_logs')
  const plan = (await store.tx(async q => {
    await q.query('SET LOCAL enable_seqscan = off')
    return await q.query("EXPLAIN SELECT * FROM request_logs WHERE client_id = 'rare' ORDER BY seq DESC LIMIT 50")
  })).rows.map((r: any) => r['QUERY PLAN']).join('\n')
  t.match(plan, /request_logs_client_idx/, 'a client filter reads the client index')
  const listed = await listRequestLogs(store, { limit: 50 }, { client_id: 'rare' })
  t.same(listed.items.map(r => r.request_id), ['r2000', 'r1000', 'r0'])
})

t.test('a COPY to a PostgreSQL that stops answering fails in the query timeout; the next batch goes through (postgres)', async t => {
  const target = new URL(await createTestDatabase(t))
  // A relay between the store and PostgreSQL that can stop passing bytes on (a frozen server or a
  // dead network, as the client sees them).
  let frozen = false
  const sockets = new Set<net.Socket>()
  const relay = net.createServer(client => {
    const server = net.connect(Number(target.port === '' ? 5432 : target.port), target.hostname)
    sockets.add(client); sockets.add(server)
    client.on('data', d => { if (!frozen) server.write(d) })
    server.on('data', d => { if (!frozen) client.write(d) })
    const end = () => { client.destroy(); server.destroy(); sockets.delete(client); sockets.delete(server) }
    client.on('error', end); server.on('error', end); client.on('close', end); server.on('close', end)
  })
  await new Promise<void>(resolve => relay.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const s of sockets) s.destroy(); relay.close() })
  const url = new URL(target)
  url.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`
  const store = await openStore({ DATABASE_URL: url.toString(), DATA_DIR: '', DB_QUERY_TIMEOUT_MS: 1000 }, silentLogger)
  t.teardown(async () => { await store.close() })
  const record = (i: number) => ({ time: Date.now(), request_id: `r${i}`, collection_id: null, proxy_id: 'p', client_id: null, profile_id: null, method: 'GET', path: '/x', status: 200, duration_ms: 1, upstream_ms: null, bytes_in: 0, bytes_out: 0 })
  await insertRequestLogs(store, [record(0)])
  frozen = true
  const began = Date.now()
  await t.rejects(insertRequestLogs(store, [record(1), record(2)]), /timeout/i, 'the batch fails instead of waiting for ever')
  t.ok(Date.now() - began < 5000, 'within about the query timeout')
  frozen = false
  await insertRequestLogs(store, [record(3)])
  const { rows } = await store.query('SELECT request_id FROM request_logs ORDER BY seq')
  t.same(rows.map((r: any) => r.request_id), ['r0', 'r3'], 'the failed batch left nothing behind; the connection it used was not reused')
})
