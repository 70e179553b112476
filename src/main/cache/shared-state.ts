import type { Redis } from 'ioredis'
import { gatewayThreadCount, type Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { createMemoryKv } from './memory-kv.js'
import { createMemoryLimiter, type QuotaCounters } from './memory-limiter.js'
import { createMemoryLocks } from './memory-locks.js'
import { createLimiterMemory, createSharedMemoryLimiter } from './shared-memory-limiter.js'
import { createRedis, type RedisOptions } from './redis.js'
import { createRedisKv } from './redis-kv.js'
import { createRedisLimiter } from './redis-limiter.js'
import { createRedisLocks } from './redis-locks.js'
import type { KeyValueCache, LockManager, RateLimiter } from './types.js'

export interface SharedState {
  kv: KeyValueCache
  locks: LockManager
  limiter: RateLimiter
  /** The shared-memory table of the limiter's counters when gateway threads count in it (GATEWAY_THREADS > 1, CACHE_TYPE=memory). */
  limiterMemory?: SharedArrayBuffer
  /** The memory limiter's quota counters (CACHE_TYPE=memory), to keep them across restarts. */
  quotaCounters?: QuotaCounters
  /** The command connection when CACHE_TYPE is redis (pass it to createEventHub; /readyz may PING it). */
  redis?: Redis
  close (): Promise<void>
}

export interface SharedStateOptions extends RedisOptions {
  config: Pick<Config, 'CACHE_TYPE' | 'REDIS_URL'> & Partial<Pick<Config, 'GATEWAY_THREADS' | 'GATEWAY_SERVER'>>
  logger: Logger
  /** Prefix of every Redis key; default `gatehouse:`. */
  keyPrefix?: string
  /** With CACHE_TYPE=memory: counters in this shared table (default: a new one when the gateway runs several threads). */
  limiterMemory?: SharedArrayBuffer
}

/** Memory or Redis variants of the shared primitives, as CACHE_TYPE says. */
export function createSharedState (opts: SharedStateOptions): SharedState {
  if (opts.config.CACHE_TYPE !== 'redis') {
    // Several gateway threads count rate limits and quotas in one shared table (Redis is shared already).
    const limiterMemory = opts.limiterMemory ?? (gatewayThreadCount(opts.config) > 1 ? createLimiterMemory() : undefined)
    const limiter = limiterMemory !== undefined ? createSharedMemoryLimiter(limiterMemory) : createMemoryLimiter()
    return { kv: createMemoryKv(), locks: createMemoryLocks(), limiter, limiterMemory, quotaCounters: limiter.quotas, close: async () => {} }
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
