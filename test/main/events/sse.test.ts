import t, { type Test } from 'tap'
import http from 'node:http'
import net from 'node:net'
import { pino } from 'pino'
import { createEventHub, type EventHub } from '../../../src/main/events/hub.js'
import { handleEventStream } from '../../../src/main/events/sse.js'
import { eventually } from '../cache/shared.js'
import { proxyEvent } from './helpers.js'
import { openStream as open, type Frame } from '../../helpers/sse.js'

const logger = pino({ level: 'silent' })

async function serve (t: Test, opts: { pingIntervalMs?: number, subscriberBuffer?: number } = {}): Promise<{ hub: EventHub, url: string, port: number }> {
  const hub = createEventHub({ config: { CACHE_TYPE: 'memory' }, logger, subscriberBuffer: opts.subscriberBuffer })
  const server = http.createServer((req, res) => { void handleEventStream(req, res, hub, { pingIntervalMs: opts.pingIntervalMs ?? 60_000 }) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  t.teardown(async () => {
    await hub.close()
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { hub, url: `http://127.0.0.1:${port}/api/v1/events/stream`, port }
}

t.test('headers, the starting position, then one data line of JSON per event', async t => {
  const { hub, url } = await serve(t)
  const { res, r } = await open(t, url)
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/event-stream')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(res.headers.get('x-accel-buffering'), 'no')
  const position = await r.next()
  t.ok(position?.id, 'the stream starts with an id')
  t.same(position?.data, [])
  hub.publish({ resource_kind: 'policy', policy_id: 'pol1', operation: 'status_changed', actor_sub: 'alice' })
  const frame = await r.next()
  t.ok(frame?.id)
  t.equal(frame?.data.length, 1)
  t.match(JSON.parse(frame!.data[0]!), { schema_version: 1, resource_kind: 'policy', policy_id: 'pol1', operation: 'status_changed', actor_sub: 'alice' })
  t.notOk(frame?.event, 'a plain message event')
})

t.test('ping comments keep the stream alive', async t => {
  const { url } = await serve(t, { pingIntervalMs: 50 })
  const { r } = await open(t, url)
  await r.next()
  const ping = await r.next()
  t.same(ping?.comment, ['ping'])
  t.same(ping?.data, [])
})

t.test('Last-Event-ID (header or query) replays what was missed; an unknown id gets a resync', async t => {
  const { hub, url } = await serve(t)
  const first = await open(t, url)
  await first.r.next()
  for (let i = 1; i <= 3; i++) hub.publish(proxyEvent(i))
  const seen = [await first.r.next(), await first.r.next(), await first.r.next()]
  const proxy = (f: Frame | undefined) => (JSON.parse(f!.data[0]!) as { proxy_id: string }).proxy_id

  const byHeader = await open(t, url, { 'last-event-id': seen[0]!.id! })
  t.same([proxy(await byHeader.r.next()), proxy(await byHeader.r.next())], ['p2', 'p3'])
  const byQuery = await open(t, `${url}?last_event_id=${encodeURIComponent(seen[1]!.id!)}`)
  t.same(proxy(await byQuery.r.next()), 'p3')
  t.equal(await byQuery.r.next(300), undefined, 'nothing more was missed')

  const unknown = await open(t, url, { 'last-event-id': 'from-another-life' })
  const resync = await unknown.r.next()
  t.equal(resync?.event, 'resync')
  t.equal(resync?.id, seen[2]!.id, 'resumes at the newest event')
  t.match(JSON.parse(resync!.data[0]!), { reason: 'missed_events_unavailable' })
  hub.publish(proxyEvent(4))
  t.same(proxy(await unknown.r.next()), 'p4')
})

t.test('a client leaving frees its subscription; closing the hub ends the streams', async t => {
  const { hub, url } = await serve(t)
  const a = await open(t, url)
  const b = await open(t, url)
  await a.r.next()
  await b.r.next()
  t.equal(hub.subscriberCount, 2)
  a.abort()
  t.ok(await eventually(() => hub.subscriberCount === 1), 'the subscription went with the client')
  hub.publish(proxyEvent(1))
  t.ok(await b.r.next(), 'the other client still receives')
  await hub.close()
  t.equal(await b.r.next(), undefined, 'the stream ended')
})

t.test('a client that stops reading is cut off once its buffer passes the bound; others go on', async t => {
  const { hub, url, port } = await serve(t, { subscriberBuffer: 64 })
  const stalled = net.connect(port, '127.0.0.1')
  t.teardown(() => { stalled.destroy() })
  stalled.write('GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n')
  stalled.pause()
  let stalledClosed = false
  stalled.on('close', () => { stalledClosed = true })
  stalled.on('error', () => {})
  t.ok(await eventually(() => hub.subscriberCount === 1))
  // Big events fill the socket buffers quickly; then writes report false and the subscription fills.
  const big = 'x'.repeat(4000)
  for (let i = 0; i < 20_000 && hub.subscriberCount > 0; i++) {
    hub.publish({ resource_kind: 'proxy', proxy_id: `${big}${i}`, collection_id: 'c', operation: 'updated' })
    if (i % 32 === 31) await new Promise(resolve => setImmediate(resolve))
  }
  t.equal(hub.subscriberCount, 0, 'the stalled subscription was cut off')
  stalled.resume()
  t.ok(await eventually(() => stalledClosed), 'reading what was sent, the client finds the connection closed')
  const fresh = await open(t, url)
  await fresh.r.next()
  hub.publish(proxyEvent(1))
  t.match(JSON.parse((await fresh.r.next())!.data[0]!), { proxy_id: 'p1' })
})
