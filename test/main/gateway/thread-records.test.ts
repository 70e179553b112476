/**
 * A gateway thread's request records crossing to the main thread as columns
 * (gateway/threads/records.ts): every record arrives as it left, through a real message port.
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads'
import t from 'tap'
import { batchSize, decodeRecords, encodeRecords, type RecordBatch } from '../../../src/main/gateway/threads/records.js'
import type { RequestRecord } from '../../../src/main/store/request-record.js'

const across = (records: RequestRecord[]): RequestRecord[] => {
  const { port1, port2 } = new MessageChannel()
  const batch = encodeRecords(records)
  port1.postMessage(batch, [batch.nums.buffer as ArrayBuffer, batch.refs.buffer as ArrayBuffer])
  const got = receiveMessageOnPort(port2)!.message as RecordBatch
  port1.close()
  t.equal(batchSize(got), records.length)
  const out: RequestRecord[] = []
  decodeRecords(got, r => { out.push(r) })
  return out
}

t.test('records arrive as they were sent, null and absent fields kept apart', async t => {
  const base: RequestRecord = {
    time: 1_795_000_000_123, request_id: 'req_1', collection_id: 'c1', proxy_id: 'p1', client_id: 'cl1', profile_id: 'pr1',
    method: 'GET', path: '/open/items/1?x=é', status: 200, duration_ms: 0.73, upstream_ms: 0.51, bytes_in: 0, bytes_out: 1024, refused: false, trace_id: null
  }
  const records: RequestRecord[] = [
    base,
    { ...base, request_id: 'req_2', status: 429, refused: true, upstream_ms: null, client_id: null, profile_id: null, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' },
    { ...base, request_id: 'req_3', collection_id: null, proxy_id: null, method: 'POST', path: '/nowhere', status: 404, refused: true, bytes_in: 17 },
    { time: 1, request_id: 'req_4', collection_id: 'c1', proxy_id: 'p1', client_id: null, profile_id: null, method: 'GET', path: '', status: 200, duration_ms: 0, upstream_ms: 0, bytes_in: 0, bytes_out: 0 }
  ]
  const out = across(records)
  t.same(out, records)
  t.notOk('refused' in out[3]!, 'an absent field stays absent')
  t.notOk('trace_id' in out[3]!)
  t.equal(out[0]!.trace_id, null, 'a null field stays null')
  t.same(across([]), [], 'an empty batch')
})

t.test('a full batch of one busy proxy', async t => {
  const records = Array.from({ length: 256 }, (_, i): RequestRecord => ({
    time: 1_795_000_000_000 + i, request_id: `req_${i}`, collection_id: 'c', proxy_id: i % 2 === 0 ? 'p0' : 'p1', client_id: null, profile_id: null,
    method: 'GET', path: `/items/${i}`, status: 200, duration_ms: i / 100, upstream_ms: i / 200, bytes_in: i, bytes_out: 2 * i, refused: false, trace_id: null
  }))
  t.same(across(records), records)
})
