/** The embedded store's request log in segment files: what goes in is listed back, in order, across segments, restarts and pruning. */
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { RequestLogFiles, requestLogLine } from '../../../src/main/observability/request-log-files.js'
import type { RequestRecord } from '../../../src/main/store/request-record.js'
import { insertRequestLogs } from '../../../src/main/store/request-logs.js'
import { createTempDir, openTestStore } from '../../helpers/db.js'

const T0 = Date.UTC(2026, 10, 26, 6, 0, 0, 123)
const record = (i: number, over: Partial<RequestRecord> = {}): RequestRecord => ({
  time: T0 + i, request_id: `r${i}`, collection_id: 'c', proxy_id: 'p', client_id: null, profile_id: null,
  method: 'GET', path: `/items/${i}`, status: 200, duration_ms: 1.25, upstream_ms: 0.5, bytes_in: 0, bytes_out: 10, ...over
})

/** Every item of a listing, page by page. */
async function listAll (log: RequestLogFiles, order: 'asc' | 'desc', limit: number, filter = {}): Promise<{ ids: string[], pages: number }> {
  const ids: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await log.list({ limit, cursor, order }, filter)
    ids.push(...page.items.map(x => x.request_id))
    cursor = page.next_cursor ?? undefined
    pages++
  } while (cursor !== undefined && pages < 10_000)
  return { ids, pages }
}

t.test('awkward values are listed back as given', async t => {
  const log = await RequestLogFiles.open(path.join(await createTempDir(t), 'request-log'))
  t.teardown(() => log.close())
  const paths = ['/tab\there', '/line\nbreak\r', '/back\\slash\\N', '/é/日本/😀', '/nul\0byte', '/' + 'x'.repeat(3000), '\\N', '/"proxy_id":"other",', '/\u2028\ud800',
    '/' + '😀'.repeat(2100), '/' + '😀'.repeat(1500)]
  await log.insert(paths.map((p, i) => record(i, { path: p, upstream_ms: null, bytes_out: 3e9 })))
  const { items } = await log.list({ limit: 100, order: 'asc' }, {})
  t.same(items.map(x => x.path), [...paths.slice(0, 5), '/' + 'x'.repeat(2047), ...paths.slice(6, 9), '/' + '😀'.repeat(2047), paths[10]],
    'tabs, line breaks, backslashes, quotes, NUL, a lone surrogate and any script kept; paths cut at 2,048 characters, ' +
    'counted as PostgreSQL counts them (an emoji is one: 1,501 characters in 3,001 UTF-16 units stay whole)')
  t.same(items[0], {
    time: new Date(T0).toISOString(), request_id: 'r0', collection_id: 'c', proxy_id: 'p', client_id: null, profile_id: null,
    method: 'GET', path: '/tab\there', status: 200, duration_ms: 1.25, upstream_ms: null, bytes_in: 0, bytes_out: 3e9, trace_id: null
  }, 'every field, the time to the millisecond')
  t.equal((await log.list({ limit: 100 }, { proxy_id: 'other' })).items.length, 0, 'a filter matches the field, not text inside another field')
})

t.test('a line is spelled as JSON.stringify spells the record', async t => {
  const odd = ['/tab\there', '/q"uote', '/back\\slash', '/é/日本/😀', '/nul\0', '/\u2028\ud800', '/del\x7f', '']
  const records: RequestRecord[] = [
    record(1),
    record(2, { upstream_ms: null, client_id: 'cl', profile_id: 'pr', refused: true, trace_id: null }),
    record(3, { refused: false, trace_id: '0af7651916cd43dd8448eb211c80319c', duration_ms: 0.1 + 0.2, bytes_out: 3e9, status: 502 }),
    ...odd.map((p, i) => record(10 + i, { path: p, method: p, request_id: p, collection_id: p }))
  ]
  for (const [i, r] of records.entries()) t.equal(requestLogLine(r, i + 1), `{"seq":${i + 1},${JSON.stringify(r).slice(1)}\n`, `record ${i}`)
})

t.test('filters, as the table answers them', async t => {
  const log = await RequestLogFiles.open(path.join(await createTempDir(t), 'request-log'))
  t.teardown(() => log.close())
  await log.insert([
    record(0), record(1, { status: 500, proxy_id: 'q' }), record(2, { method: 'POST', client_id: 'k', profile_id: 'f' }),
    record(3, { status: 404, proxy_id: null, collection_id: null }), record(4, { time: T0 + 60_000 })
  ])
  const ids = async (f: object) => (await log.list({ limit: 100 }, f)).items.map(x => x.request_id)
  t.same(await ids({}), ['r4', 'r3', 'r2', 'r1', 'r0'], 'newest first')
  t.same(await ids({ proxy_id: 'p' }), ['r4', 'r2', 'r0'])
  t.same(await ids({ status: 500 }), ['r1'])
  t.same(await ids({ status: 50 }), [], 'a status matches whole')
  t.same(await ids({ method: 'POST', client_id: 'k', profile_id: 'f' }), ['r2'])
  t.same(await ids({ collection_id: 'c', status: 200 }), ['r4', 'r2', 'r0'])
  t.same(await ids({ since: new Date(T0 + 2).toISOString() }), ['r4', 'r3', 'r2'], 'since: at or after')
  t.same(await ids({ until: new Date(T0 + 2).toISOString() }), ['r1', 'r0'], 'until: before')
  t.same(await ids({ since: new Date(T0 + 1).toISOString(), until: new Date(T0 + 30_000).toISOString(), proxy_id: 'p' }), ['r2'])
})

t.test('segments by time and size, paged both ways, pruned whole, continued after a restart', async t => {
  const dir = path.join(await createTempDir(t), 'request-log')
  let now = T0
  const opts = { segmentMs: 1000, segmentBytes: 1_000_000, now: () => now }
  let log = await RequestLogFiles.open(dir, opts)
  for (let b = 0; b < 3; b++) {
    now = T0 + b * 1500
    await log.insert(Array.from({ length: 5 }, (_, i) => record(b * 5 + i, { time: now - 10 + i })))
  }
  t.equal(fs.readdirSync(dir).length, 3, 'a new segment once the current one is older than segmentMs')
  const all = Array.from({ length: 15 }, (_, i) => `r${i}`)
  for (const limit of [1, 4, 5, 100]) {
    const desc = await listAll(log, 'desc', limit)
    t.same(desc.ids, [...all].reverse(), `newest first across segments, pages of ${limit}`)
    t.equal(desc.pages, Math.max(1, Math.ceil(15 / limit)))
    t.same((await listAll(log, 'asc', limit)).ids, all, `oldest first across segments, pages of ${limit}`)
  }
  t.same((await listAll(log, 'desc', 3, { since: new Date(T0 + 1500 - 10).toISOString() })).ids, all.slice(5).reverse(), 'since skips the segments before it')

  t.equal(await log.prune(new Date(T0 + 2000)), 5, 'only the segment whose every record is older goes')
  t.same((await listAll(log, 'asc', 100)).ids, all.slice(5))
  t.equal(await log.prune(new Date(T0 + 10_000_000)), 5, 'the newest segment stays, whatever its age')
  t.same((await listAll(log, 'asc', 100)).ids, all.slice(10))

  // A crash in the middle of an append leaves a line without its newline: it is not a record, and seq goes on.
  await log.close()
  const last = fs.readdirSync(dir).sort().at(-1)!
  fs.appendFileSync(path.join(dir, last), '{"seq":16,"time":1,"request_id":"cut')
  log = await RequestLogFiles.open(dir, opts)
  t.teardown(() => log.close())
  t.same((await listAll(log, 'desc', 100)).ids, all.slice(10).reverse(), 'the cut line is not listed')
  await log.insert([record(15)])
  t.equal(fs.readdirSync(dir).length, 2, 'a restart begins a new segment')
  const page = await log.list({ limit: 1 }, {})
  t.equal(page.items[0]?.request_id, 'r15')
  t.same((await listAll(log, 'asc', 2)).ids, [...all.slice(10), 'r15'], 'the cursor (seq) continues from the last whole line')

  const small = await RequestLogFiles.open(path.join(dir, 'small'), { segmentBytes: 600 })
  t.teardown(() => small.close())
  for (let i = 0; i < 12; i++) await small.insert([record(i), record(100 + i)])
  t.ok(fs.readdirSync(path.join(dir, 'small')).length >= 4, 'a new segment past segmentBytes')
  t.equal((await listAll(small, 'desc', 7)).ids.length, 24)
})

t.test('lines across read chunks, in any script, read whole both ways', async t => {
  const log = await RequestLogFiles.open(path.join(await createTempDir(t), 'request-log'))
  t.teardown(() => log.close())
  const n = 6000
  for (let b = 0; b < n; b += 1000) {
    await log.insert(Array.from({ length: 1000 }, (_, i) => record(b + i, { path: `/日本/${'é'.repeat((b + i) % 97)}/😀/${b + i}` })))
  }
  const desc = await log.list({ limit: n + 1 }, {})
  t.equal(desc.items.length, n)
  t.ok(desc.items.every((x, i) => x.request_id === `r${n - 1 - i}` && x.path === `/日本/${'é'.repeat((n - 1 - i) % 97)}/😀/${n - 1 - i}`), 'every line backwards, whole')
  const asc = await log.list({ limit: n, order: 'asc' }, {})
  t.ok(asc.items.every((x, i) => x.request_id === `r${i}`), 'every line forwards, in order')
  t.equal(asc.next_cursor, null)
  t.same((await log.list({ limit: 3 }, { proxy_id: 'p', since: new Date(T0 + 10).toISOString(), until: new Date(T0 + 13).toISOString() })).items.map(x => x.request_id), ['r12', 'r11', 'r10'])
})

t.test('a listing while batches are appended sees whole lines only', async t => {
  const log = await RequestLogFiles.open(path.join(await createTempDir(t), 'request-log'))
  t.teardown(() => log.close())
  let writing = true
  const writer = (async () => {
    try {
      for (let b = 0; b < 40; b++) await log.insert(Array.from({ length: 500 }, (_, i) => record(b * 500 + i)))
    } finally { writing = false }
  })()
  let listings = 0
  while (writing) {
    await new Promise(resolve => setImmediate(resolve)) // a listing of no segment yet does no I/O: let the writer's run
    const { items } = await log.list({ limit: 300 }, {})
    const seqs = items.map(x => Number(x.request_id.slice(1)))
    if (!seqs.every((s, i) => i === 0 || s === (seqs[i - 1] ?? NaN) - 1)) { t.fail('a gap or a torn line in a listing'); break }
    listings++
  }
  await writer
  t.ok(listings > 0)
  t.equal((await log.list({ limit: 20_001 }, {})).items.length, 20_000)
})

t.test("rows an earlier version kept in the embedded store's table move to the files, oldest first", async t => {
  const store = await openTestStore(t, 'embedded')
  await insertRequestLogs(store, Array.from({ length: 12_000 }, (_, i) => record(i, { upstream_ms: i === 0 ? null : 0.5, client_id: i === 1 ? 'k' : null })))
  const log = await RequestLogFiles.open(path.join(await createTempDir(t), 'request-log'))
  t.teardown(() => log.close())
  t.equal(await log.takeOver(store), 12_000, 'every row')
  const { rows } = await store.query('SELECT count(*)::int AS n FROM request_logs')
  t.equal(Number(rows[0].n), 0, 'the table is empty afterwards')
  const asc = (await log.list({ limit: 12_000, order: 'asc' }, {})).items
  t.ok(asc.every((x, i) => x.request_id === `r${i}`), 'in their order')
  t.same(asc[0], { ...asc[0], time: new Date(T0).toISOString(), upstream_ms: null, path: '/items/0', bytes_out: 10 })
  t.equal(asc[1]?.client_id, 'k')
  t.equal(await log.takeOver(store), 0, 'nothing the second time')
})

t.test('an append that fails (the directory gone) loses nothing once it is back, and leaves no gap in seq', async t => {
  const root = await createTempDir(t)
  const dir = path.join(root, 'request-log')
  let now = T0
  const log = await RequestLogFiles.open(dir, { segmentMs: 1000, now: () => now })
  t.teardown(() => log.close())
  await log.insert([record(0), record(1)])
  fs.renameSync(dir, path.join(root, 'away'))
  now += 2000 // a new segment is due: opening it fails
  await t.rejects(log.insert([record(2)]))
  fs.renameSync(path.join(root, 'away'), dir)
  await log.insert([record(2), record(3)]) // the writer hands the same batch again
  t.same((await listAll(log, 'asc', 100)).ids, ['r0', 'r1', 'r2', 'r3'], 'each record once, in order')
  const seqs = fs.readdirSync(dir).sort().flatMap(f => fs.readFileSync(path.join(dir, f), 'utf8').trimEnd().split('\n').map(l => JSON.parse(l).seq))
  t.same(seqs, [1, 2, 3, 4])
})
