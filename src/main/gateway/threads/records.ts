/**
 * A gateway thread's finished-request records as they cross to the main thread: columns instead
 * of objects. Structured-cloning an array of records costs about 1.5-4 µs a record (the
 * serializer walks every object and the receiver rebuilds it property by property); as columns
 * (numbers in a Float64Array, string references in an Int32Array, both transferred, and the
 * strings in one array with a batch's repeated ids sent once) the whole hand-over costs about a
 * quarter of that. The main thread rebuilds plain RequestRecords with every field as it was,
 * null and absent kept apart.
 */
import type { RequestRecord } from '../../store/request-record.js'

/** A batch of records as columns (structured-cloneable; `nums` and `refs` buffers are transferable). */
export interface RecordBatch {
  nums: Float64Array
  refs: Int32Array
  strs: string[]
}

// Per record: time, status, duration_ms, upstream_ms (NaN: null), bytes_in, bytes_out, refused (0 absent, 1 false, 2 true).
const NUMS = 7
// Per record, string references into strs (NULL, ABSENT): request_id, collection_id, proxy_id, client_id, profile_id, method, path, trace_id.
const REFS = 8
const NULL = -1
const ABSENT = -2

export function encodeRecords (records: readonly RequestRecord[]): RecordBatch {
  const n = records.length
  const nums = new Float64Array(n * NUMS)
  const refs = new Int32Array(n * REFS)
  const strs: string[] = []
  // Ids repeat within a batch (a busy proxy, its collection, a client): each is sent once.
  const seen = new Map<string, number>()
  const id = (v: string | null | undefined): number => {
    if (v === null) return NULL
    if (v === undefined) return ABSENT
    let k = seen.get(v)
    if (k === undefined) { k = strs.push(v) - 1; seen.set(v, k) }
    return k
  }
  for (let i = 0; i < n; i++) {
    const r = records[i]!
    const o = i * NUMS
    nums[o] = r.time
    nums[o + 1] = r.status
    nums[o + 2] = r.duration_ms
    nums[o + 3] = r.upstream_ms ?? NaN
    nums[o + 4] = r.bytes_in
    nums[o + 5] = r.bytes_out
    nums[o + 6] = r.refused === undefined ? 0 : r.refused ? 2 : 1
    const q = i * REFS
    refs[q] = strs.push(r.request_id) - 1
    refs[q + 1] = id(r.collection_id)
    refs[q + 2] = id(r.proxy_id)
    refs[q + 3] = id(r.client_id)
    refs[q + 4] = id(r.profile_id)
    refs[q + 5] = id(r.method)
    refs[q + 6] = strs.push(r.path) - 1
    refs[q + 7] = id(r.trace_id)
  }
  return { nums, refs, strs }
}

/** The number of records in a batch. */
export function batchSize (b: RecordBatch): number { return b.nums.length / NUMS }

/** Hands each record of the batch to `each`, rebuilt as the thread had it. */
export function decodeRecords (b: RecordBatch, each: (r: RequestRecord) => void): void {
  const { nums, refs, strs } = b
  const n = nums.length / NUMS
  const str = (k: number): string | null => k >= 0 ? strs[k]! : null
  for (let i = 0; i < n; i++) {
    const o = i * NUMS
    const q = i * REFS
    const refused = nums[o + 6]!
    const trace = refs[q + 7]!
    const r: RequestRecord = {
      time: nums[o]!,
      request_id: strs[refs[q]!]!,
      collection_id: str(refs[q + 1]!),
      proxy_id: str(refs[q + 2]!),
      client_id: str(refs[q + 3]!),
      profile_id: str(refs[q + 4]!),
      method: strs[refs[q + 5]!]!,
      path: strs[refs[q + 6]!]!,
      status: nums[o + 1]!,
      duration_ms: nums[o + 2]!,
      upstream_ms: Number.isNaN(nums[o + 3]) ? null : nums[o + 3]!,
      bytes_in: nums[o + 4]!,
      bytes_out: nums[o + 5]!,
      refused: refused === 2,
      trace_id: str(trace)
    }
    // The gateway sets both; a record without them arrives without them.
    if (refused === 0) delete r.refused
    if (trace === ABSENT) delete r.trace_id
    each(r)
  }
}
