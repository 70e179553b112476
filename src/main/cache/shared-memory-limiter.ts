/**
 * The memory limiter's counters in shared memory, so that every gateway thread of one process
 * (GATEWAY_THREADS) counts against the same numbers: a fixed open-addressing table in a
 * SharedArrayBuffer, one slot per key (by a 64-bit hash of it), each slot guarded by its own
 * spin lock (held for a few instructions; Atomics.wait is not allowed on the main thread).
 *
 *   slot (32 bytes, Int32 view):  [0] lock  [1] hash hi  [2] hash lo  [3] count  [4-5] resetAt (Float64)
 *
 * Same semantics as createMemoryLimiter: a window starts at a key's first admitted hit, refused
 * hits do not count. A key is looked for in PROBE slots from its hash; a slot whose window ended
 * is free again. When all PROBE slots hold live counters (far more live keys than slots), the one
 * that ends soonest is taken over: its key starts afresh. 2^16 slots (2 MiB) by default.
 */
import { secondsUntil } from './quota-period.js'
import { limiterOver, type QuotaCounters } from './memory-limiter.js'
import type { HitResult, RateLimiter } from './types.js'

const SLOT_INTS = 8
const PROBE = 32
export const DEFAULT_LIMITER_SLOTS = 1 << 16

/** The shared table: created once on the main thread, handed to every gateway thread. */
export function createLimiterMemory (slots = DEFAULT_LIMITER_SLOTS): SharedArrayBuffer {
  if ((slots & (slots - 1)) !== 0) throw new Error('limiter slots must be a power of two')
  return new SharedArrayBuffer(slots * SLOT_INTS * 4)
}

/** Two FNV-1a hashes with different offsets: a 64-bit key (hi never 0: 0 marks an empty slot). */
function hash (key: string): [number, number] {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  return [(a | 1) | 0, b | 0]
}

export type SharedMemoryLimiter = RateLimiter & {
  sync: NonNullable<RateLimiter['sync']>
  quotas: QuotaCounters
  /** Tells the quota listener of hits admitted on another thread (their counts are already in the table). */
  notify (key: string, stamp: string, endMs: number, cost: number): void
}

export function createSharedMemoryLimiter (memory: SharedArrayBuffer, now: () => number = Date.now): SharedMemoryLimiter {
  const ints = new Int32Array(memory)
  const floats = new Float64Array(memory)
  const mask = ints.length / SLOT_INTS - 1
  // Reads of the typed arrays (indices are always in range: the table's size is fixed).
  const int = (i: number): number => ints[i]!
  const endOf = (s: number): number => floats[(s >> 1) + 2]!
  const lock = (s: number) => { while (Atomics.compareExchange(ints, s, 0, 1) !== 0) { /* spin: held for a few instructions */ } }
  const unlock = (s: number) => { Atomics.store(ints, s, 0) }

  /** Runs `fn` on the key's slot, locked; claims a slot when the key has none. */
  const withSlot = <R>(key: string, at: number, fn: (s: number, fresh: boolean) => R): R => {
    const [hi, lo] = hash(key)
    const start = hi & mask
    // First pass: the key's own slot, wherever it is in the window.
    for (let i = 0; i < PROBE; i++) {
      const s = ((start + i) & mask) * SLOT_INTS
      if (Atomics.load(ints, s + 1) !== hi || Atomics.load(ints, s + 2) !== lo) continue
      lock(s)
      if (int(s + 1) === hi && int(s + 2) === lo) { try { return fn(s, endOf(s) <= at) } finally { unlock(s) } }
      unlock(s)
    }
    // Second pass: the first slot that is the key's (claimed meanwhile), empty or ended; every
    // thread scans in the same order, so two claiming the same key meet in the same slot.
    let soonest = -1
    let soonestAt = Infinity
    for (let i = 0; i < PROBE; i++) {
      const s = ((start + i) & mask) * SLOT_INTS
      lock(s)
      const mine = int(s + 1) === hi && int(s + 2) === lo
      const ends = endOf(s)
      if (mine || int(s + 1) === 0 || ends <= at) {
        if (!mine) { ints[s + 1] = hi; ints[s + 2] = lo; ints[s + 3] = 0; floats[(s >> 1) + 2] = 0 }
        try { return fn(s, !mine || ends <= at) } finally { unlock(s) }
      }
      unlock(s)
      if (ends < soonestAt) { soonestAt = ends; soonest = s }
    }
    // Every slot in reach holds a live counter: the one ending soonest starts afresh for this key.
    const s = soonest
    lock(s)
    ints[s + 1] = hi; ints[s + 2] = lo; ints[s + 3] = 0; floats[(s >> 1) + 2] = 0
    try { return fn(s, true) } finally { unlock(s) }
  }

  const count = (key: string, limit: number, cost: number, resetAt: (at: number) => number): HitResult => {
    const at = now()
    return withSlot(key, at, (s, fresh) => {
      if (fresh) { ints[s + 3] = 0; floats[(s >> 1) + 2] = resetAt(at) }
      const allowed = int(s + 3) + cost <= limit
      if (allowed) ints[s + 3] = int(s + 3) + cost
      return { allowed, remaining: Math.max(0, limit - int(s + 3)), resetSeconds: secondsUntil(endOf(s), at) }
    })
  }
  const { sync, hit, hitQuota, listeners } = limiterOver(count, now)
  return {
    quotas: {
      seed (key, stamp, endMs, n) {
        const at = now()
        if (endMs <= at) return
        withSlot(`q:${key}:${stamp}`, at, (s, fresh) => {
          if (fresh) { ints[s + 3] = n; floats[(s >> 1) + 2] = endMs } else ints[s + 3] = Math.max(int(s + 3), n)
        })
      },
      listen (fn) { listeners.fn = fn }
    },
    notify (key, stamp, endMs, cost) { listeners.fn?.(key, stamp, endMs, cost) },
    sync,
    hit,
    hitQuota
  }
}
