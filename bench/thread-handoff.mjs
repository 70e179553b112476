#!/usr/bin/env node
/**
 * What a gateway thread's hand-over to the main thread costs per request, without the network
 * (after npm run build): a batch of request records through a real MessageChannel, posted,
 * received and rebuilt, as structured-cloned objects (before) and as columns
 * (src/main/gateway/threads/records.ts, now); and a turn's access lines as one string.
 * Prints ns per record, best of BENCH_REPEAT (default 3) runs of 2,000 batches.
 *   node bench/thread-handoff.mjs [batch size, default 256]
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads'
import { decodeRecords, encodeRecords } from '../dist/src/main/gateway/threads/records.js'

const N = Number(process.argv[2] ?? 256)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3)
const ids = { collection: '0f8fad5b-d9cb-469f-a165-70867728950e', proxy: '7c9e6679-7425-40de-944b-e07fc1f90ae7' }
const batch = Array.from({ length: N }, (_, i) => ({
  time: Date.now(), request_id: `${Math.random().toString(16).slice(2)}${i}`, collection_id: ids.collection, proxy_id: ids.proxy,
  client_id: null, profile_id: null, method: 'GET', path: `/open/items/${i}`, status: 200, duration_ms: 0.73, upstream_ms: 0.51,
  bytes_in: 0, bytes_out: 1024, refused: false, trace_id: null
}))
const line = '{"level":30,"time":"2026-11-27T12:00:00.000Z","service":"gatehouse","thread":1,"request_id":"4bf92f3577b34da6","method":"GET","path":"/open/items/1","route":"/open/items/{id}","status":200,"upstream_ms":0.51,"ms":0.73,"msg":"access"}\n'
const text = line.repeat(N)
const { port1, port2 } = new MessageChannel()
let sink = 0
const contenders = {
  'records, structured clone': () => { port1.postMessage({ t: 'obs', records: batch }); for (const r of receiveMessageOnPort(port2).message.records) sink += r.status },
  'records, columns': () => {
    const b = encodeRecords(batch)
    port1.postMessage({ t: 'obs', records: b }, [b.nums.buffer, b.refs.buffer])
    decodeRecords(receiveMessageOnPort(port2).message.records, r => { sink += r.status })
  },
  'access lines, one string a turn': () => { port1.postMessage({ t: 'log', text }); sink += receiveMessageOnPort(port2).message.text.length }
}
for (const [name, f] of Object.entries(contenders)) {
  for (let i = 0; i < 300; i++) f()
  let best = Infinity
  for (let r = 0; r < REPEAT; r++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < 2000; i++) f()
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 2000 / N)
  }
  console.log(`${name}: ${best.toFixed(0)} ns per record`)
}
port1.close()
if (sink === 0) console.log('')
