import t, { type Test } from 'tap'
import { pino } from 'pino'
import { createEventHub, type EventHub, type EventHubOptions } from '../../../src/main/events/hub.js'
import { eventually, testRedis } from '../cache/shared.js'
import { events, ids, kinds, proxyEvent, proxyIds, take } from './helpers.js'

type Make = (t: Test, opts?: Partial<EventHubOptions>) => Promise<EventHub>

/** One contract for the hub with and without Redis. */
function hubContract (t: Test, make: Make) {
  t.test('fans every event out to every subscriber, in order, with the envelope', async t => {
    const hub = await make(t)
    const subs = Array.from({ length: 50 }, () => hub.subscribe())
    const before = Math.floor(Date.now() / 1000)
    for (let i = 1; i <= 3; i++) hub.publish(proxyEvent(i))
    for (const sub of subs) {
      const items = await take(sub, 4)
      t.same(kinds(items), ['position', 'event', 'event', 'event'])
      t.same(proxyIds(items), ['p1', 'p2', 'p3'])
    }
    hub.publish({ resource_kind: 'collection', collection_id: 'c9', operation: 'duplicated', related_collection_id: 'c10' })
    const [item] = await take(subs[2]!, 1)
    if (item?.type !== 'event') throw new Error('expected an event')
    t.match(item.event, { schema_version: 1, resource_kind: 'collection', collection_id: 'c9', operation: 'duplicated', related_collection_id: 'c10' })
    t.ok(Number.isInteger(item.event.occurred_at_unix) && item.event.occurred_at_unix >= before)
    t.same(JSON.parse(item.data), item.event, 'data is the JSON of the event')
    t.ok(item.id.length > 0)
  })

  t.test('events written over several turns of the loop (1,200 subscribers) reach each subscriber once, in order', async t => {
    const hub = await make(t)
    const subs = Array.from({ length: 1200 }, () => hub.subscribe())
    for (let i = 1; i <= 3; i++) hub.publish(proxyEvent(i))
    // Joins while the first event is still being written: what it gets live is exactly what comes after its position.
    const late = await new Promise<ReturnType<EventHub['subscribe']>>(resolve => setImmediate(() => resolve(hub.subscribe())))
    for (const sub of subs) t.same(proxyIds(await take(sub, 4)), ['p1', 'p2', 'p3'])
    hub.publish(proxyEvent(4))
    const [position] = await take(late, 1)
    // Read up to p4 (each read waits for an item that comes: no deadline is what ends it).
    const live = []
    while (!proxyIds(live).includes('p4')) { const items = await take(late, 1); if (items.length === 0) break; live.push(...items) }
    const cut = live.length - 1
    t.ok(position?.type === 'position' && proxyIds(live).at(-1) === 'p4', 'the late subscriber starts at a position and gets p4')
    const replayed = await take(hub.subscribe({ lastEventId: position!.id }), cut + 1)
    t.same(proxyIds(live.slice(0, cut + 1)), proxyIds(replayed), 'no event both covered by its position and sent to it, none missed')
  })

  t.test('a subscriber that stops reading is cut off; the others get everything', async t => {
    const hub = await make(t, { subscriberBuffer: 10 })
    const stalled = hub.subscribe()
    const reader = hub.subscribe()
    const got: string[] = []
    const reading = (async () => { for await (const item of reader) if (item.type === 'event') { got.push(item.id); if (got.length === 30) return } })()
    // Events at the pace the reader keeps up with, as requests make them; the stalled one keeps none of them.
    for (let i = 1; i <= 30; i++) {
      hub.publish(proxyEvent(i))
      await eventually(() => got.length === i)
    }
    await reading
    t.equal(got.length, 30)
    t.ok(await eventually(() => stalled.ended === 'overflow'), 'the stalled subscriber was cut off')
    t.equal(await stalled.next(), undefined, 'and its stream ends')
    t.equal(hub.subscriberCount, 1)
  })

  t.test('reconnecting with the last id replays what was missed, then goes on live', async t => {
    const hub = await make(t)
    const sub = hub.subscribe()
    for (let i = 1; i <= 4; i++) hub.publish(proxyEvent(i))
    const seen = events(await take(sub, 5))
    t.equal(seen.length, 4)
    const again = hub.subscribe({ lastEventId: seen[1]!.id })
    const replayed = await take(again, 2)
    t.same(proxyIds(replayed), ['p3', 'p4'])
    t.same(ids(replayed), ids(seen.slice(2)), 'the same ids as live')
    hub.publish(proxyEvent(5))
    t.same(proxyIds(await take(again, 1)), ['p5'])
    const caughtUp = hub.subscribe({ lastEventId: seen[3]!.id })
    hub.publish(proxyEvent(6))
    t.same(kinds(await take(caughtUp, 2)), ['event', 'event'], 'nothing missed: p5 then p6')
  })

  t.test('the position a new subscriber starts at covers the events after it', async t => {
    const hub = await make(t)
    const [position] = await take(hub.subscribe(), 1)
    t.equal(position?.type, 'position')
    hub.publish(proxyEvent(1))
    hub.publish(proxyEvent(2))
    const probe = hub.subscribe()
    await take(probe, 3)
    const back = hub.subscribe({ lastEventId: position!.id })
    t.same(proxyIds(await take(back, 2)), ['p1', 'p2'])
  })

  t.test('an id older than the window, or unknown, gets a resync that can be resumed from', async t => {
    const hub = await make(t, { replayWindow: 5 })
    const sub = hub.subscribe()
    // Redis trims MAXLEN ~ by whole nodes (100 entries): publish well past that.
    for (let i = 1; i <= 300; i++) hub.publish(proxyEvent(i))
    const seen = events(await take(sub, 301))
    t.equal(seen.length, 300)
    for (const lastEventId of [seen[0]!.id, 'not-an-id', '1-1']) {
      const late = hub.subscribe({ lastEventId })
      const [first] = await take(late, 1)
      t.equal(first?.type, 'resync', `resync for ${lastEventId}`)
      const resumed = hub.subscribe({ lastEventId: first!.id })
      hub.publish(proxyEvent(1000))
      t.same(proxyIds(await take(resumed, 1)), ['p1000'], 'resuming from the resync id misses nothing')
      t.same(proxyIds(await take(late, 1)), ['p1000'], 'the resynced stream goes on live')
    }
  })

  t.test('a broadcast reaches its handlers once, the sender included', async t => {
    const hub = await make(t)
    const got: unknown[] = []
    const other: unknown[] = []
    const off = hub.onBroadcast('workflow-triggers', m => got.push(m))
    hub.onBroadcast('elsewhere', m => other.push(m))
    const message = { event_type: 'workflow_updated', proxy_id: 'p1', version: 3, source: 'rest' }
    hub.broadcast('workflow-triggers', message)
    t.ok(await eventually(() => got.length === 1))
    hub.broadcast('workflow-triggers', { ...message, version: 4 })
    t.ok(await eventually(() => got.length === 2))
    t.same(got, [message, { ...message, version: 4 }])
    t.same(other, [])
    off()
    hub.broadcast('workflow-triggers', message)
    hub.broadcast('elsewhere', 'marker')
    t.ok(await eventually(() => other.length === 1))
    t.equal(got.length, 2, 'no delivery after unsubscribing')
  })

  t.test('closing the hub ends every subscription', async t => {
    const hub = await make(t)
    const sub = hub.subscribe()
    await take(sub, 1)
    const pending = sub.next()
    await hub.close()
    t.equal(await pending, undefined)
    t.equal(sub.ended, 'hub_closed')
    t.equal(hub.subscribe().ended, 'hub_closed')
    hub.publish(proxyEvent(1))
  })
}

const logger = pino({ level: 'silent' })

t.test('memory', async t => hubContract(t, async (t, opts) => {
  const hub = createEventHub({ config: { CACHE_TYPE: 'memory' }, logger, ...opts })
  t.teardown(() => hub.close())
  return hub
}))

t.test('redis', async t => hubContract(t, async (t, opts) => {
  const { redis, prefix } = await testRedis(t, 'hub')
  const hub = createEventHub({ config: { CACHE_TYPE: 'redis' }, logger, redis, keyPrefix: prefix, ...opts })
  t.teardown(() => hub.close())
  await hub.ready()
  return hub
}))

t.test('CACHE_TYPE redis without a connection is a wiring error', async t => {
  t.throws(() => createEventHub({ config: { CACHE_TYPE: 'redis' }, logger }))
})
