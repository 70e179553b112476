import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import type { Logger } from '../../../src/main/logger.js'
import { requireService, TEST_REDIS_URL } from '../../helpers/services.js'

/** A key or channel prefix no other test run uses. */
export const uniquePrefix = (what: string) => `gh-test:${what}:${process.pid}:${randomBytes(4).toString('hex')}:`

/** The tests' Redis (test/helpers/services.ts). */
export const REDIS_URL = TEST_REDIS_URL

/** A logger whose lines the test can read. */
export function recordingLogger (): { logger: Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>)
      cb()
    }
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

export { eventually } from '../../helpers/wait.js'

/** A ready Redis connection made the way the service makes it, with a unique key prefix; both dropped in teardown. */
export async function testRedis (t: { teardown (fn: () => unknown): void }, what: string, url = REDIS_URL) {
  const { createRedis, whenRedisReady } = await import('../../../src/main/cache/redis.js')
  const logger = pino({ level: 'silent' })
  const redis = createRedis({ REDIS_URL: requireService(url, 'Redis') }, logger)
  await whenRedisReady(redis)
  const prefix = uniquePrefix(what)
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}*`).catch(() => [])
    if (keys.length > 0) await redis.del(...keys).catch(() => 0)
    redis.disconnect()
  })
  return { redis, prefix, logger }
}
