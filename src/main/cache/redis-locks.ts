import type { Redis } from 'ioredis'
import type { Logger } from '../logger.js'
import { createOutageLog, defineScript, runScript } from './redis.js'
import type { LockManager } from './types.js'

// Owner checks and the change run in one script so no other instance can slip in between.
const ACQUIRE = defineScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if cur then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)
const RENEW = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)
const RELEASE = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

/**
 * Leases in Redis under `<prefix>lock:<name>` and `<prefix>claim:<key>`. While
 * Redis is unreachable every call answers false (nobody can prove ownership, so
 * at-most-once work waits) and the outage is logged once.
 */
export function createRedisLocks (redis: Redis, keyPrefix: string, logger: Logger): LockManager {
  const outage = createOutageLog(logger, 'locks')
  const guarded = async (run: () => Promise<unknown>): Promise<boolean> => {
    try {
      const r = await run()
      outage.ok('Locks reach Redis again')
      return r === 1 || r === 'OK'
    } catch (err) {
      outage.fail(err, 'Locks cannot reach Redis; lock and claim requests are refused until it returns')
      return false
    }
  }
  const lock = (name: string) => `${keyPrefix}lock:${name}`
  const ms = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs))
  return {
    acquire: (name, ttlMs, owner) => guarded(() => runScript(redis, ACQUIRE, [lock(name)], [owner, ms(ttlMs)])),
    renew: (name, ttlMs, owner) => guarded(() => runScript(redis, RENEW, [lock(name)], [owner, ms(ttlMs)])),
    release: (name, owner) => guarded(() => runScript(redis, RELEASE, [lock(name)], [owner])),
    claimOnce: (key, ttlMs) => guarded(() => redis.set(`${keyPrefix}claim:${key}`, '1', 'PX', ms(ttlMs), 'NX'))
  }
}
