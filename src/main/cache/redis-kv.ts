import type { Redis } from 'ioredis'
import type { KeyValueCache } from './types.js'

/** Values as JSON under `<prefix>kv:<key>`; a Redis failure rejects the call. */
export function createRedisKv (redis: Redis, keyPrefix: string): KeyValueCache {
  const k = (key: string) => `${keyPrefix}kv:${key}`
  return {
    async get (key) {
      const json = await redis.get(k(key))
      return json === null ? undefined : JSON.parse(json)
    },
    async set (key, value, ttlMs) {
      const json = JSON.stringify(value)
      if (json === undefined) throw new TypeError('cache values must be JSON-serialisable')
      if (ttlMs === undefined) await redis.set(k(key), json)
      else await redis.set(k(key), json, 'PX', Math.max(1, Math.ceil(ttlMs)))
    },
    async delete (key) {
      return (await redis.del(k(key))) > 0
    }
  }
}
