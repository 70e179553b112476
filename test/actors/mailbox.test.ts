import t from 'tap'
import { Mailbox, Mailboxes } from '../../src/actors/mailbox.js'

t.test('bounded concurrency, bounded queue, 503 at once when full, 504 for jobs that waited past their deadline', async t => {
  const box = new Mailbox<number>({ maxQueue: 2, maxConcurrent: 1 })
  const releases: Array<() => void> = []
  let running = 0
  let peak = 0
  const job = (v: number) => async () => {
    running++
    peak = Math.max(peak, running)
    await new Promise<void>(resolve => releases.push(resolve))
    running--
    return v
  }
  const far = Date.now() + 60_000
  const a = box.submit(job(1), far)
  const c = box.submit(job(3), Date.now() - 1).then(() => null, (e: unknown) => e)
  const b = box.submit(job(2), far)
  await t.rejects(box.submit(job(4), far), { status: 503, code: 'service_unavailable', headers: { 'retry-after': '1' } }, 'full: refused at once')
  t.equal(box.queued, 2)
  releases.shift()!()
  t.equal(await a, 1)
  t.match(await c, { status: 504 }, 'a job whose deadline passed in the queue does not run')
  releases.shift()!()
  t.equal(await b, 2)
  t.equal(peak, 1, 'never more than maxConcurrent at once')
  t.equal(box.rejected, 1)
})

t.test('a flood on one proxy does not block another', async t => {
  const boxes = new Mailboxes<string>({ maxQueue: 5, maxConcurrent: 1 })
  const hold: Array<() => void> = []
  const slow = async () => { await new Promise<void>(resolve => hold.push(resolve)); return 'slow' }
  const flood = Array.from({ length: 20 }, () => boxes.get('flooded').submit(slow, Date.now() + 60_000).then(() => 'ok', () => 'refused'))
  t.equal(await boxes.get('calm').submit(async () => 'calm', Date.now() + 60_000), 'calm', 'the other proxy answers at once')
  t.equal(boxes.stats().flooded?.rejected, 14, '1 running + 5 queued, the rest refused')
  const settle = async () => { while (hold.length > 0) { hold.shift()!(); await new Promise(resolve => setImmediate(resolve)) } }
  const done = Promise.all(flood)
  await settle()
  await settle()
  const outcomes = await done
  t.equal(outcomes.filter(o => o === 'ok').length, 6)
})

t.test('configured mailboxes keep their limits until forgotten; a busy one is forgotten once its jobs are done', async t => {
  const boxes = new Mailboxes<string>({ maxQueue: 5, maxConcurrent: 4 })
  boxes.configure('served', { maxQueue: 0, maxConcurrent: 1 })
  t.match(boxes.stats().served, { max_concurrency: 1, max_queue: 0, running: 0 }, 'configured before any job')
  const hold: Array<() => void> = []
  const held = async () => { await new Promise<void>(resolve => hold.push(resolve)); return 'held' }
  const first = boxes.get('served').submit(held, Date.now() + 60_000)
  await t.rejects(boxes.get('served').submit(held, Date.now() + 60_000), { code: 'service_unavailable' }, 'the configured limit applies')

  // A raised limit starts what waits at once.
  boxes.configure('served', { maxQueue: 1, maxConcurrent: 1 })
  const second = boxes.get('served').submit(held, Date.now() + 60_000)
  t.match(boxes.stats().served, { running: 1, queued: 1 })
  boxes.configure('served', { maxQueue: 1, maxConcurrent: 2 })
  t.match(boxes.stats().served, { running: 2, queued: 0 }, 'the waiting job started with the new limit')

  boxes.forget('served')
  t.match(boxes.stats().served, { running: 2, max_concurrency: 2 }, 'busy: kept with its limits')
  hold.shift()!()
  t.equal(await first, 'held')
  t.ok(boxes.stats().served !== undefined, 'still one job running')
  hold.shift()!()
  t.equal(await second, 'held')
  t.equal(boxes.stats().served, undefined, 'gone once idle')

  // Not configured: default limits, dropped as soon as it is idle.
  t.equal(await boxes.get('draft').submit(async () => 'ran', Date.now() + 60_000), 'ran')
  t.equal(boxes.stats().draft, undefined)
  t.match(boxes.get('draft').limits, { maxConcurrent: 4, maxQueue: 5 })
})
