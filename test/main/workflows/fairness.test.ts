/**
 * Fairness across proxies: one proxy's CPU-bound workflows (code nodes that
 * spin until their time limit) must not hold up another proxy's trivial
 * workflow, and the busy proxy fills its own mailbox (503) rather than the
 * pool. Latency ratios are measured in bench/fairness.mjs; this test only
 * asserts a generous bound (the busy work queued here takes about 6 s of CPU).
 */
import t from 'tap'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

t.test("a busy proxy's CPU-bound runs leave another proxy's trivial workflow answering", async t => {
  const w = await startService(t, 'embedded', { WORKERS: '1' })
  const busy = await w.proxy('/spin', ['GET'])
  const light = await w.proxy('/hello', ['GET'])
  t.equal((await w.api('PUT', `/proxies/${busy.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('spin', 'code_node', { code: 'while (true) {}' }), n('reply', 'response_node', { status: 200, body: 'done' })],
      edges: [e('trg', 'spin'), e('spin', 'reply')],
      runtime_settings: { timeout_ms: 60_000, max_concurrency: 4, max_queue: 2 }
    }
  })).status, 200)
  t.equal((await w.api('PUT', `/proxies/${light.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('reply', 'response_node', { status: 200, body: { hello: 'world' } })],
      edges: [e('trg', 'reply')]
    }
  })).status, 200)
  const hello = async () => {
    const t0 = Date.now()
    const r = await fetch(`${w.gateway}${light.base as string}/hello`, { headers: { connection: 'close' } })
    await r.arrayBuffer()
    return { status: r.status, ms: Date.now() - t0 }
  }
  t.equal((await hello()).status, 200, 'idle: the trivial workflow answers')

  // 10 spinning runs: 4 run, 2 wait in the busy proxy's mailbox, the rest are refused.
  const spins = Array.from({ length: 10 }, async () => {
    const r = await fetch(`${w.gateway}${busy.base as string}/spin`, { headers: { connection: 'close' } })
    await r.arrayBuffer()
    return { status: r.status, retryAfter: r.headers.get('retry-after') }
  })
  await new Promise(resolve => setTimeout(resolve, 500))
  const during = []
  for (let i = 0; i < 5; i++) during.push(await hello())
  const busyAnswers = await Promise.all(spins)
  t.same(during.map(d => d.status), [200, 200, 200, 200, 200], 'the trivial workflow answered throughout')
  const worst = Math.max(...during.map(d => d.ms))
  t.ok(worst < 5000, `the trivial workflow kept answering while the busy proxy spun (worst ${worst} ms)`)
  const refused = busyAnswers.filter(a => a.status === 503)
  t.equal(refused.length, 4, "the busy proxy's overflow was refused")
  t.ok(refused.every(a => a.retryAfter !== null), 'with Retry-After')
})
