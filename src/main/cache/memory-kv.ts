import type { KeyValueCache } from './types.js'

interface Entry { json: string, expiresAt: number }

/**
 * One-instance cache. Values are kept as JSON text, as in Redis, so a caller
 * never shares a mutable object with a later reader. The oldest entry is
 * evicted past `maxEntries`; expired ones are dropped when read.
 */
export function createMemoryKv (opts: { maxEntries?: number } = {}): KeyValueCache {
  const maxEntries = opts.maxEntries ?? 10000
  const map = new Map<string, Entry>()
  const live = (key: string): Entry | undefined => {
    const e = map.get(key)
    if (e === undefined) return undefined
    if (e.expiresAt <= Date.now()) { map.delete(key); return undefined }
    return e
  }
  return {
    async get (key) {
      const e = live(key)
      return e === undefined ? undefined : JSON.parse(e.json)
    },
    async set (key, value, ttlMs) {
      const json = JSON.stringify(value)
      if (json === undefined) throw new TypeError('cache values must be JSON-serialisable')
      map.delete(key)
      map.set(key, { json, expiresAt: ttlMs === undefined ? Infinity : Date.now() + ttlMs })
      // Map iteration is insertion order: the first key is the oldest write.
      if (map.size > maxEntries) map.delete(map.keys().next().value as string)
    },
    async delete (key) {
      const had = live(key) !== undefined
      map.delete(key)
      return had
    }
  }
}
