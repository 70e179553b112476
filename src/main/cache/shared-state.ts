import type { Redis } from 'ioredis'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { createMemoryKv } from './memory-kv.js'
import { createMemoryLimiter, type QuotaCounters } from './memory-limiter.js'
import { createMemoryLocks } from './memory-locks.js'
import { createRedis, type RedisOptions } from './redis.js'
import { createRedisKv } from './redis-kv.js'
import { createRedisLimiter } from './redis-limiter.js'
import { createRedisLocks } from './redis-locks.js'
import type { KeyValueCache, LockManager, RateLimiter } from './types.js'

export interface SharedState {
  kv: KeyValueCache
  locks: LockManager
  limiter: RateLimiter
  /** The memory limiter's quota counters (CACHE_TYPE=memory), to keep them across restarts. */
  quotaCounters?: QuotaCounters
  /** The command connection when CACHE_TYPE is redis (pass it to createEventHub; /readyz may PING it). */
  redis?: Redis
  close (): Promise<void>
}

export interface SharedStateOptions extends RedisOptions {
  config: Pick<Config, 'CACHE_TYPE' | 'REDIS_URL'>
  logger: Logger
  /** Prefix of every Redis key; default `gatehouse:`. */
  keyPrefix?: string
}

/** Memory or Redis variants of the shared primitives, as CACHE_TYPE says. */
export function createSharedState (opts: SharedStateOptions): SharedState {
  if (opts.config.CACHE_TYPE !== 'redis') {
    const limiter = createMemoryLimiter()
    return { kv: createMemoryKv(), locks: createMemoryLocks(), limiter, quotaCounters: limiter.quotas, close: async () => {} }
  }
  const keyPrefix = opts.keyPrefix ?? 'gatehouse:'
  const redis = createRedis(opts.config, opts.logger, opts)
  return {
    kv: createRedisKv(redis, keyPrefix),
    locks: createRedisLocks(redis, keyPrefix, opts.logger),
    limiter: createRedisLimiter(redis, opts.logger, { keyPrefix }),
    redis,
    async close () {
      await redis.quit().catch(() => redis.disconnect())
    }
  }
}
