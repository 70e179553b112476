import t, { type Test } from 'tap'
import { pino } from 'pino'
import { createRedis, whenRedisReady } from '../../../src/main/cache/redis.js'
import { createEventHub, type EventHub } from '../../../src/main/events/hub.js'
import { eventually, recordingLogger, testRedis, uniquePrefix } from '../cache/shared.js'
import { startRedisServer } from '../cache/redis-server.js'
import { events, ids, kinds, proxyEvent, proxyIds, take } from './helpers.js'
import type { Logger } from '../../../src/main/logger.js'

const silent = pino({ level: 'silent' })

async function twoHubs (t: Test, url?: string, logger: Logger = silent): Promise<[EventHub, EventHub]> {
  const a = await testRedis(t, 'hubs', url)
  const b = await testRedis(t, 'hubs', url)
  const hubs = [a, b].map(({ redis }) => createEventHub({ config: { CACHE_TYPE: 'redis' }, logger, redis, keyPrefix: a.prefix })) as [EventHub, EventHub]
  t.teardown(() => Promise.all(hubs.map(h => h.close())))
  await Promise.all(hubs.map(h => h.ready()))
  return hubs
}

t.test('an event made on A reaches subscribers on A and B exactly once, with the same ids', async t => {
  const [a, b] = await twoHubs(t)
  const onA = a.subscribe()
  const onB = b.subscribe()
  for (let i = 1; i <= 3; i++) a.publish(proxyEvent(i))
  b.publish(proxyEvent(99)) // a last event from B marks the end of what to read
  const gotA = events(await take(onA, 5))
  const gotB = events(await take(onB, 5))
  t.same(proxyIds(gotA).sort(), ['p1', 'p2', 'p3', 'p99'])
  t.same(proxyIds(gotB).sort(), ['p1', 'p2', 'p3', 'p99'])
  t.same(ids(gotA).sort(), ids(gotB).sort(), 'the same SSE ids on both instances')
  t.same(proxyIds(gotB).filter(p => p !== 'p99'), ['p1', 'p2', 'p3'], 'in publish order')
  t.same(await take(onA, 1, 300), [], 'no second copy on the origin')
  t.same(await take(onB, 1, 300), [], 'no second copy on the other instance')
})

t.test('a client reconnecting to the other instance replays from the shared window', async t => {
  const [a, b] = await twoHubs(t)
  const onA = a.subscribe()
  for (let i = 1; i <= 4; i++) a.publish(proxyEvent(i))
  const seen = events(await take(onA, 5))
  const onB = b.subscribe({ lastEventId: seen[0]!.id })
  t.same(proxyIds(await take(onB, 3)), ['p2', 'p3', 'p4'])
  a.publish(proxyEvent(5))
  t.same(proxyIds(await take(onB, 1)), ['p5'])
  t.same(await take(onB, 1, 300), [], 'the live copy of a replayed event is not sent again')
})

t.test('a broadcast is applied once on every instance, the sender included', async t => {
  const [a, b] = await twoHubs(t)
  const gotA: unknown[] = []
  const gotB: unknown[] = []
  a.onBroadcast('workflow-triggers', m => gotA.push(m))
  b.onBroadcast('workflow-triggers', m => gotB.push(m))
  const message = { event_type: 'workflow_updated', proxy_id: 'p1', version: 7, source: 'instance-a' }
  a.broadcast('workflow-triggers', message)
  b.broadcast('workflow-triggers', { ...message, version: 8 })
  t.ok(await eventually(() => gotA.length === 2 && gotB.length === 2))
  await new Promise(resolve => setTimeout(resolve, 200))
  t.same(gotA.map(m => (m as { version: number }).version).sort(), [7, 8])
  t.same(gotB.map(m => (m as { version: number }).version).sort(), [7, 8])
})

t.test('Redis down: local delivery goes on, the failure is logged once; after restart both resubscribe and deliver again', async t => {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const { logger, lines } = recordingLogger()
  const [a, b] = await twoHubs(t, server.url, logger)
  const reconnected: string[] = []
  a.onReconnect(() => { reconnected.push('a') })
  b.onReconnect(() => { reconnected.push('b') })
  const onA = a.subscribe()
  const onB = b.subscribe()
  await take(onA, 1)
  await take(onB, 1)
  a.publish(proxyEvent(1))
  t.same(proxyIds(await take(onB, 1)), ['p1'])
  t.same(proxyIds(await take(onA, 1)), ['p1'])

  await server.stop()
  for (let i = 2; i <= 4; i++) a.publish(proxyEvent(i))
  t.same(proxyIds(await take(onA, 3)), ['p2', 'p3', 'p4'], 'events made during the outage reach local subscribers')
  t.equal(lines.filter(l => l.component === 'events').length, 1, 'the publish failure is logged once')

  await server.start()
  t.ok(await eventually(() => reconnected.length === 2), 'both instances resubscribed')
  // Redis came back empty: what B missed cannot be read back, so B's subscriber is told to refetch.
  const [resync] = await take(onB, 1)
  t.equal(resync?.type, 'resync')
  a.publish(proxyEvent(5))
  t.same(proxyIds(await take(onB, 1)), ['p5'], 'delivery across instances resumes')
  t.same(proxyIds(await take(onA, 2, 500)), ['p5'], 'once on the origin')
  t.equal(onA.ended, undefined)
  t.equal(onB.ended, undefined)
})

t.test('Redis unreachable from the start: delivery, replay and broadcast work on the instance', async t => {
  const server = await startRedisServer()
  const url = server.url
  await server.close()
  const redis = createRedis({ REDIS_URL: url }, silent)
  t.teardown(() => redis.disconnect())
  const hub = createEventHub({ config: { CACHE_TYPE: 'redis' }, logger: silent, redis, keyPrefix: uniquePrefix('down') })
  t.teardown(() => hub.close())
  const sub = hub.subscribe()
  hub.publish(proxyEvent(1))
  hub.publish(proxyEvent(2))
  const items = await take(sub, 3)
  t.same(kinds(items), ['position', 'event', 'event'])
  const back = hub.subscribe({ lastEventId: items[1]!.id })
  t.same(proxyIds(await take(back, 1)), ['p2'])
  const got: unknown[] = []
  hub.onBroadcast('c', m => got.push(m))
  hub.broadcast('c', { x: 1 })
  t.ok(await eventually(() => got.length === 1))
  await t.rejects(whenRedisReady(redis, 200), 'Redis really is unreachable')
})
