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
