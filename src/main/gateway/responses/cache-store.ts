/**
 * Where cached answers are kept: this process's memory (LRU, bounded by bytes), or Redis with
 * CACHE_TYPE=redis so that every instance serves what one fetched. Entries are kept by proxy
 * so a purge or a configuration change of a proxy drops them.
 *
 *   memory: Map in recency order (a hit moves its entry to the end; the oldest go first past
 *           RESPONSE_CACHE_MAX_BYTES), plus a set of keys per proxy for purges
 *   redis:  <prefix>rc:<proxy id>:<sha256 of the key> = [4-byte meta length][meta JSON][body], PX ttl;
 *           purge = SCAN + UNLINK of the proxy's keys
 *   thread: a gateway thread's view of the main thread's memory store (GATEWAY_THREADS > 1): a
 *           get is a message round trip to the main thread, a set one message; purges and
 *           configuration changes act on the main thread's store (one store, one byte limit)
 */
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from '../../logger.js'
import { createOutageLog } from '../../cache/redis.js'
import type { EncodedMemo } from './whole-answer.js'

/** A kept answer, or the note that answers for this key vary by these request headers. */
export type CacheEntry = CachedAnswer | VaryNote
export interface CachedAnswer {
  kind: 'answer'
  status: number
  statusText: string
  headers: Array<[string, string]>
  body: Buffer
  storedAt: number
  expiresAt: number
  /** Encoded bodies made for hits (memory store only). */
  memo: EncodedMemo
}
export interface VaryNote { kind: 'vary', vary: string[], expiresAt: number }

export interface ResponseStore {
  readonly kind: 'memory' | 'redis'
  get (proxyId: string, key: string): CacheEntry | null | Promise<CacheEntry | null>
  set (proxyId: string, key: string, entry: CacheEntry): void
  /** Drops every entry of the proxy (on this instance's memory, or in Redis for every instance). */
  purge (proxyId: string): Promise<void>
  bytes (): number
  entries (): number
}

const entrySize = (key: string, e: CacheEntry): number =>
  key.length + 200 + (e.kind === 'vary' ? 0 : e.body.length + e.headers.reduce((n, [k, v]) => n + k.length + v.length + 16, 0))

export function createMemoryStore (maxBytes: number): ResponseStore {
  const map = new Map<string, { proxyId: string, entry: CacheEntry, size: number }>()
  const byProxy = new Map<string, Set<string>>()
  let bytes = 0
  const remove = (key: string): void => {
    const cur = map.get(key)
    if (cur === undefined) return
    map.delete(key)
    bytes -= cur.size
    byProxy.get(cur.proxyId)?.delete(key)
  }
  return {
    kind: 'memory',
    get (_proxyId, key) {
      const cur = map.get(key)
      if (cur === undefined) return null
      // Most recent last: eviction takes from the front.
      map.delete(key)
      map.set(key, cur)
      return cur.entry
    },
    set (proxyId, key, entry) {
      remove(key)
      const size = entrySize(key, entry)
      if (size > maxBytes) return
      map.set(key, { proxyId, entry, size })
      bytes += size
      let keys = byProxy.get(proxyId)
      if (keys === undefined) byProxy.set(proxyId, keys = new Set())
      keys.add(key)
      while (bytes > maxBytes) remove(map.keys().next().value as string)
    },
    async purge (proxyId) {
      for (const key of byProxy.get(proxyId) ?? []) remove(key)
      byProxy.delete(proxyId)
    },
    bytes: () => bytes,
    entries: () => map.size
  }
}

export function createRedisStore (redis: Redis, keyPrefix: string, logger: Logger): ResponseStore {
  const outage = createOutageLog(logger, 'response-cache')
  const redisKey = (proxyId: string, key: string) => `${keyPrefix}rc:${proxyId}:${createHash('sha256').update(key).digest('base64url')}`
  return {
    kind: 'redis',
    async get (proxyId, key) {
      let raw: Buffer | null
      // Redis away: a miss (the backend answers), never an error for the client.
      try { raw = await redis.getBuffer(redisKey(proxyId, key)) } catch (err) { outage.fail(err, 'The response cache cannot reach Redis; answering from the backends'); return null }
      outage.ok('The response cache reaches Redis again')
      if (raw === null || raw.length < 4) return null
      const metaLength = raw.readUInt32BE(0)
      const meta = JSON.parse(raw.subarray(4, 4 + metaLength).toString()) as Omit<CachedAnswer, 'body' | 'memo'> | VaryNote
      if (meta.kind === 'vary') return meta
      return { ...meta, body: raw.subarray(4 + metaLength), memo: new Map() }
    },
    set (proxyId, key, entry) {
      const ttl = entry.expiresAt - Date.now()
      if (ttl <= 0) return
      const meta = entry.kind === 'vary' ? entry : { kind: entry.kind, status: entry.status, statusText: entry.statusText, headers: entry.headers, storedAt: entry.storedAt, expiresAt: entry.expiresAt }
      const metaBuf = Buffer.from(JSON.stringify(meta))
      const head = Buffer.alloc(4)
      head.writeUInt32BE(metaBuf.length, 0)
      const value = Buffer.concat(entry.kind === 'vary' ? [head, metaBuf] : [head, metaBuf, entry.body])
      redis.set(redisKey(proxyId, key), value, 'PX', ttl).catch((err: unknown) => outage.fail(err, 'The response cache cannot reach Redis; answering from the backends'))
    },
    async purge (proxyId) {
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}rc:${proxyId}:*`, 'COUNT', 1000)
        cursor = next
        if (keys.length > 0) await redis.unlink(...keys)
      } while (cursor !== '0')
    },
    bytes: () => 0,
    entries: () => 0
  }
}

/** A cache entry as it crosses threads: the body as its own bytes, no memo. */
export type WireCacheEntry = (Omit<CachedAnswer, 'body' | 'memo'> & { body: Uint8Array }) | VaryNote

/** The entry as a message (the body copied once, into a buffer the message transfers) and the buffers to transfer. */
export function toWire (e: CacheEntry): [WireCacheEntry, ArrayBuffer[]] {
  if (e.kind === 'vary') return [{ kind: 'vary', vary: e.vary, expiresAt: e.expiresAt }, []]
  const body = new Uint8Array(e.body.length)
  body.set(e.body)
  return [{ kind: 'answer', status: e.status, statusText: e.statusText, headers: e.headers, body, storedAt: e.storedAt, expiresAt: e.expiresAt }, [body.buffer]]
}

export function fromWire (e: WireCacheEntry): CacheEntry {
  if (e.kind === 'vary') return e
  return { ...e, body: Buffer.from(e.body.buffer, e.body.byteOffset, e.body.byteLength), memo: new Map() }
}

/**
 * A gateway thread's store: the main thread's memory store, asked over the thread's port. Each
 * fetched entry has its own memo, shared by the lookups of one batch (a compressed hit is
 * compressed again by the next batch). Purges and configuration-change drops are done on the
 * main thread's store, once: nothing here.
 */
export function createThreadStore (ask: (proxyId: string, key: string) => Promise<CacheEntry | null>, put: (proxyId: string, key: string, entry: CacheEntry) => void): ResponseStore {
  return {
    kind: 'memory',
    get: ask,
    set: put,
    async purge () {},
    bytes: () => 0,
    entries: () => 0
  }
}
