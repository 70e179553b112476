/**
 * Sub-workflow fan-out against an unrelated proxy: four runs of a proxy whose workflow loops over
 * 1,000 items calling a sub-workflow of plain set nodes (no I/O: nothing in it ever waits) keep the
 * one worker thread busy for seconds. A trivial workflow proxy asked while they run must answer
 * before any of them finishes: the order of events, not a time, is what is asserted.
 */
import t from 'tap'
import { startBackend } from '../../helpers/gateway.js'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string, sourceHandle?: string) => ({ id: `${source}-${target}`, source, target, ...(sourceHandle !== undefined ? { sourceHandle } : {}) })

t.test('a saturated fan-out proxy leaves another workflow proxy answering', async t => {
  const w = await startService(t, 'embedded', { WORKERS: '1' })
  const backend = await startBackend(t)
  const sub = await w.proxy('/sub', ['POST'])
  const fan = await w.proxy('/fan', ['POST'])
  const light = await w.proxy('/hello', ['GET'])
  // The sub-workflow: a chain of set nodes, each working on the input a little.
  const steps = Array.from({ length: 12 }, (_, i) => n(`s${i}`, 'set_node', { values: { i, v: `{{trigger.request.body.n * ${i + 1} + ${i}}}`, text: `{{String(trigger.request.body.n)}}-${i}` } }))
  t.equal((await w.api('PUT', `/proxies/${sub.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), ...steps, n('reply', 'response_node', { status: 200, body: '{{s11.output}}' })],
      edges: [e('trg', 's0'), ...steps.slice(1).map((s, i) => e(`s${i}`, s.id)), e('s11', 'reply')]
    }
  })).status, 200)
  t.equal((await w.api('PUT', `/proxies/${fan.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [
        n('trg', 'http_trigger'),
        n('started', 'http_request_node', { method: 'GET', url: `${backend.url}/started` }),
        n('each', 'loop_node', { items: '{{trigger.request.body.items}}' }),
        n('call', 'execute_subworkflow', { workflow_id: sub.workflow_id, input: { request: { body: { n: '{{$json[\'$index\']}}' } } } }),
        n('reply', 'response_node', { status: 200, body: { done: true } })
      ],
      edges: [e('trg', 'started'), e('started', 'each'), e('each', 'call', 'loop'), e('each', 'reply', 'done')],
      runtime_settings: { timeout_ms: 300_000, max_concurrency: 4, max_queue: 4 }
    }
  })).status, 200)
  t.equal((await w.api('PUT', `/proxies/${light.id as string}/workflow`, {
    enabled: true,
    workflow: { nodes: [n('trg', 'http_trigger'), n('reply', 'response_node', { status: 200, body: { hello: 'world' } })], edges: [e('trg', 'reply')] }
  })).status, 200)

  const finished: string[] = []
  const items = Array.from({ length: 1000 }, (_, i) => i)
  const fans = Array.from({ length: 4 }, async (_, i) => {
    const r = await fetch(`${w.gateway}${fan.base as string}/fan`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ items }) })
    const body = await r.json() as any
    finished.push(`fan${i}`)
    return { status: r.status, body }
  })
  // Every fan-out run has passed its first node: the four are looping now.
  for (let i = 0; i < 600 && backend.seen.length < 4; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(backend.seen.length, 4, 'the four fan-out runs started')

  const hello = await fetch(`${w.gateway}${light.base as string}/hello`, { headers: { connection: 'close' } })
  t.same(await hello.json(), { hello: 'world' })
  finished.push('hello')
  t.same(finished, ['hello'], 'the trivial workflow answered while every fan-out run was still going')

  const answers = await Promise.all(fans)
  t.same(answers.map(a => a.status), [200, 200, 200, 200], 'and the fan-out runs finished too')
  t.same(answers[0]?.body, { done: true })
})
