import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startService } from './service.js'
import { retryUntil } from '../../helpers/wait.js'

// Workers keep each saved definition compiled (keyed by proxy and version): a save must reach the
// gateway at once, and two proxies must never answer with each other's plan, on every worker.
const flow = (tag: string) => ({
  nodes: [
    { id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} },
    { id: 'shape', name: 'shape', type: 'set_node', settings: { values: { id: '{{trigger.params.id}}', tag } } },
    { id: 'reply', name: 'reply', type: 'response_node', settings: { status: 200, headers: { 'x-tag': tag }, body: '{{shape.output}}' } }
  ],
  edges: [{ id: 'e1', source: 'trg', target: 'shape' }, { id: 'e2', source: 'shape', target: 'reply' }],
  runtime_settings: { timeout_ms: 60_000 }
})

for (const kind of STORE_KINDS) {
  t.test(`a saved workflow is compiled once per worker, and a new save runs the new definition (${kind})`, async t => {
    // Two worker threads: later tasks travel without their definition, and the other thread asks for it.
    const w = await startService(t, kind, { WORKERS: '2' })
    const a = await w.proxy('/items/{id}', ['GET'])
    const b = await w.proxy('/items/{id}', ['GET'])
    const call = async (p: any, id: string) => {
      const r = await fetch(`${w.gateway}${p.base as string}/items/${id}`, { headers: { connection: 'close' } })
      return { status: r.status, tag: r.headers.get('x-tag'), body: await r.json() as any }
    }
    // Many at once, so both threads take some of them.
    const burst = async (p: any, n = 24) => await Promise.all(Array.from({ length: n }, async (_, i) => await call(p, String(i))))

    t.equal((await w.api('PUT', `/proxies/${a.id as string}/workflow`, { workflow: flow('a1'), enabled: true })).status, 200)
    t.equal((await w.api('PUT', `/proxies/${b.id as string}/workflow`, { workflow: flow('b1'), enabled: true })).status, 200)
    for (const r of await burst(a)) t.match(r, { status: 200, tag: 'a1', body: { tag: 'a1' } })
    for (const r of await burst(b)) t.match(r, { status: 200, tag: 'b1', body: { tag: 'b1' } }, 'proxy b never runs proxy a\'s plan')

    // Saved again with a change: every later request runs the new definition, on every thread.
    t.equal((await w.api('PUT', `/proxies/${a.id as string}/workflow`, { workflow: flow('a2') })).status, 200)
    let first = await retryUntil(async () => await call(a, '1'), r => r.tag === 'a2', undefined, 100)
    t.match(first, { status: 200, tag: 'a2', body: { id: '1', tag: 'a2' } })
    const again = await burst(a)
    t.same(again.map(r => r.tag), again.map(() => 'a2'), 'no request answers from the old plan')
    t.same(again.map(r => r.body.id), again.map((_, i) => String(i)), 'each request its own data')
    for (const r of await burst(b)) t.match(r, { status: 200, tag: 'b1' }, 'the other proxy keeps its own definition')

    // Saving the same definition back (a new version, as a restore would) also runs at once.
    t.equal((await w.api('PUT', `/proxies/${a.id as string}/workflow`, { workflow: flow('a1') })).status, 200)
    first = await retryUntil(async () => await call(a, '2'), r => r.tag === 'a1', undefined, 100)
    t.match(first, { status: 200, tag: 'a1' })
    const back = await burst(a)
    t.same(back.map(r => r.tag), back.map(() => 'a1'))
  })
}
