/** The request log writer: batches off the hot path, a bounded buffer while the sink fails, one warning per outage. */
import t from 'tap'
import { RequestLogWriter } from '../../../src/main/observability/request-log.js'
import type { RequestRecord } from '../../../src/main/store/request-record.js'
import { recordingLogger } from '../cache/shared.js'
import { eventually } from '../../helpers/wait.js'

const rec = (i: number): RequestRecord => ({
  time: i, request_id: `r${i}`, collection_id: null, proxy_id: null, client_id: null, profile_id: null, method: 'GET', path: '/',
  status: 200, duration_ms: 1, upstream_ms: null, bytes_in: 0, bytes_out: 0
})

t.test('records are written in batches, in order, and kept while the sink fails', async t => {
  const batches: RequestRecord[][] = []
  let failing = false
  const { logger, lines } = recordingLogger()
  const w = new RequestLogWriter({
    sink: async records => { if (failing) throw new Error('database down'); batches.push(records) },
    logger, flushIntervalMs: 3_600_000, batchSize: 500, maxBuffer: 2000
  })
  t.teardown(() => w.close())
  for (let i = 0; i < 1200; i++) w.append(rec(i))
  t.equal(batches.length, 0, 'appending writes nothing by itself')
  await w.flush()
  t.same(batches.map(b => b.length), [500, 500, 200], 'batches of at most batchSize')
  t.same(batches.flat().map(r => r.time), Array.from({ length: 1200 }, (_, i) => i), 'every record once, in order')

  failing = true
  for (let i = 0; i < 2500; i++) w.append(rec(10_000 + i))
  await w.flush()
  await w.flush()
  t.equal(w.dropped, 500, 'the buffer is bounded: the oldest records are dropped and counted')
  t.equal(lines.filter(l => l.msg === 'request log writes failing; records are kept in a bounded buffer').length, 1, 'one warning per outage')

  failing = false
  batches.length = 0
  await w.flush()
  const kept = batches.flat().map(r => r.time)
  t.equal(kept.length, 2000, 'what the buffer held is written when the sink is back')
  t.equal(kept[0], 10_500)
  t.equal(kept.at(-1), 12_499)
  t.ok(lines.some(l => l.msg === 'request log writes resumed'))
})

t.test('under overload the oldest records are dropped and counted, also while a batch is being written, and close writes the rest', async t => {
  const written: number[] = []
  let release: () => void = () => {}
  let slow = true
  const w = new RequestLogWriter({
    sink: async records => {
      if (slow) await new Promise<void>(resolve => { release = resolve })
      written.push(...records.map(r => r.time))
    },
    logger: recordingLogger().logger, flushIntervalMs: 3_600_000, batchSize: 100, maxBuffer: 300
  })
  for (let i = 0; i < 300; i++) w.append(rec(i))
  const flushing = w.flush()
  // The first batch (0..99) is in flight; 250 more arrive: the buffer holds 300, so 250 of the oldest go.
  for (let i = 300; i < 550; i++) w.append(rec(i))
  t.equal(w.dropped, 250)
  t.equal(w.buffered, 300)
  slow = false
  release()
  await flushing
  await w.close()
  t.same(written.slice(0, 100), Array.from({ length: 100 }, (_, i) => i), 'the batch in flight is written')
  t.same(written.slice(100), Array.from({ length: 300 }, (_, i) => 250 + i), 'then the newest 300, each once, in order')
  t.equal(w.buffered, 0)
  const text = w.prometheus().join('\n')
  t.match(text, /^gatehouse_request_log_dropped_total 250$/m)
  t.match(text, /^gatehouse_request_log_written_total 400$/m)
  t.match(text, /^gatehouse_request_log_buffered 0$/m)
})

t.test('a long outage keeps memory bounded: the buffer never holds more than maxBuffer records', async t => {
  const w = new RequestLogWriter({ sink: async () => { throw new Error('down') }, logger: recordingLogger().logger, flushIntervalMs: 3_600_000, maxBuffer: 1000 })
  t.teardown(() => { clearInterval((w as any).timer) })
  for (let i = 0; i < 100_000; i++) w.append(rec(i))
  await w.flush()
  t.equal(w.buffered, 1000)
  t.equal(w.dropped, 99_000)
  t.ok((w as any).queue.length <= 2000, 'the backing array is cut down as records are dropped')
})

t.test('records are written once enough wait, before the interval; a failing store is tried once an interval', async t => {
  const batches: number[] = []
  let failing = false
  let calls = 0
  const w = new RequestLogWriter({
    sink: async records => { calls++; if (failing) throw new Error('down'); batches.push(records.length) },
    logger: recordingLogger().logger, flushIntervalMs: 60_000, checkIntervalMs: 10, eagerRecords: 50
  })
  t.teardown(() => w.close())
  const sleep = async (ms: number) => await new Promise(resolve => setTimeout(resolve, ms))
  for (let i = 0; i < 10; i++) w.append(rec(i))
  await sleep(150)
  t.same(batches, [], 'a few records wait for the interval')
  for (let i = 10; i < 60; i++) w.append(rec(i))
  await eventually(() => batches.length > 0, undefined, 10)
  t.same(batches, [60], 'once 50 wait they are written at a look, long before the interval')
  failing = true
  calls = 0
  for (let i = 0; i < 100; i++) w.append(rec(i))
  await eventually(() => calls > 0, undefined, 10)
  await sleep(300)
  t.equal(calls, 1, 'a failing store is tried once, then not at every look')
  failing = false
  await w.flush()
  t.same(batches, [60, 100], 'what waited through the failure is written once it is back')
})

t.test('a flush writes what waited when it began; what arrives meanwhile waits for the next one, and close writes everything', async t => {
  const batches: number[][] = []
  let release: () => void = () => {}
  let hold = true
  const w = new RequestLogWriter({
    sink: async records => {
      batches.push(records.map(r => r.time))
      if (hold) await new Promise<void>(resolve => { release = resolve })
    },
    logger: recordingLogger().logger, flushIntervalMs: 3_600_000, batchSize: 100
  })
  for (let i = 0; i < 150; i++) w.append(rec(i))
  const flushing = w.flush()
  await new Promise(resolve => setImmediate(resolve))
  for (let i = 150; i < 160; i++) w.append(rec(i)) // while the first batch is being written
  hold = false
  release()
  await flushing
  t.same(batches.map(b => [b[0], b.at(-1), b.length]), [[0, 99, 100], [100, 149, 50]], 'the 150 that waited, in batches of 100')
  t.equal(w.buffered, 10, 'the 10 that came during the write wait')
  await w.close()
  t.same(batches.at(-1), Array.from({ length: 10 }, (_, i) => 150 + i), 'close writes them')
  t.equal(w.buffered, 0)
})
