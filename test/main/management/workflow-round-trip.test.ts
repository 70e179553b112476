/**
 * Property: every workflow definition the save route accepts survives export → import →
 * export unchanged. Definitions are generated from a seeded generator (the seed is in every
 * assertion message, so a failure can be replayed with ROUND_TRIP_SEED).
 */
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement, type TestManagement } from '../../helpers/management.js'
import { prng } from '../../helpers/prng.js'

const RUNS = 20

function generate (rand: () => number): { workflow: any, enabled: boolean } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]! // rand() < 1: an index below the length
  const maybe = (p = 0.5) => rand() < p
  const text = () => pick(['a', 'ÄÖ ü', 'x'.repeat(40), '{{ trigger.request.body }}', 'line\nbreak', '"quoted"', '', '😀'])
  const bodies: Array<() => [string, Record<string, unknown>]> = [
    () => ['set_node', { values: { a: text(), n: Math.floor(rand() * 100), nested: { deep: [1, 'two', null, true] } } }],
    () => ['delay_node', { delay_ms: Math.floor(rand() * 50) }],
    () => ['code_node', { code: 'return { ok: true, at: $execution.id }' }],
    () => ['condition_node', { conditions: [{ left: '{{ trigger.request.method }}', operator: pick(['equals', 'not_equals', 'contains']), right: text() }], combine: pick(['and', 'or']) }],
    () => ['http_request_node', { method: pick(['GET', 'POST']), url: 'https://example.com/x', timeout_ms: 1000 + Math.floor(rand() * 1000) }]
  ]
  const n = 1 + Math.floor(rand() * 6)
  const nodes: any[] = [{ id: 'trigger', name: 'trigger', type: pick(['http_trigger', 'manual_trigger']), settings: {} }]
  for (let i = 0; i < n; i++) {
    const [type, settings] = pick(bodies)()
    const node: any = { id: `n${i}-${Math.floor(rand() * 1e6)}`, name: `${type} ${i} ${text().slice(0, 5)}`, type, settings }
    if (maybe(0.7)) node.position = maybe(0.8) ? { x: Math.round(rand() * 1000), y: rand() * 500 } : { x: 1 }
    if (maybe(0.2)) delete node.settings
    nodes.push(node)
  }
  nodes.push({ id: 'reply', name: 'reply', type: 'response_node', settings: { status: pick([200, 201, 503]), headers: { 'content-type': 'application/json' }, body: text() } })
  const edges: any[] = []
  for (let i = 1; i < nodes.length; i++) {
    const from = nodes[i - 1]
    const edge: any = { source: from.id, target: nodes[i].id }
    if (from.type === 'condition_node') edge.sourceHandle = pick(['true', 'false'])
    else if (maybe(0.2)) edge.sourceHandle = null
    if (maybe(0.5)) edge.id = `e${i}-${Math.floor(rand() * 1e6)}`
    edges.push(edge)
  }
  const workflow: any = { nodes, edges }
  if (maybe(0.7)) {
    const rs: any = {}
    if (maybe()) rs.timeout_ms = 1 + Math.floor(rand() * 60000)
    if (maybe()) rs.save_on_success = maybe()
    if (maybe()) rs.save_on_error = maybe()
    if (maybe()) rs.max_concurrency = 1 + Math.floor(rand() * 999)
    if (maybe()) rs.max_queue = Math.floor(rand() * 10000)
    workflow.runtime_settings = rs
  }
  return { workflow, enabled: maybe() }
}

async function upload (m: TestManagement, file: unknown) {
  const form = new FormData()
  form.append('file', new Blob([JSON.stringify(file)], { type: 'application/json' }), 'rt.gatehouse.json')
  const res = await fetch(`${m.url}/api/v1/collections/import?keep_status=true`, {
    method: 'POST', body: form, headers: { connection: 'close', authorization: `Bearer ${await m.token('editor')}` }
  })
  return { status: res.status, body: await res.json() as any }
}

const seed0 = Number(process.env.ROUND_TRIP_SEED ?? Date.now() % 100000)

for (const kind of STORE_KINDS) {
  t.test(`accepted workflow definitions survive export → import → export (${kind}, seed ${seed0})`, async t => {
    const m = await startManagement(t, kind)
    let accepted = 0
    for (let run = 0; run < RUNS; run++) {
      const seed = seed0 + run
      const { workflow, enabled } = generate(prng(seed))
      const c = (await m.call('POST', '/api/v1/collections', { body: { name: `rt ${seed}`, base_path: `/rt${seed}`, upstream_url: 'http://127.0.0.1:9' } })).body
      const p = (await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.id, name: 'p', methods: ['GET', 'POST'], path: '/p/{id}' } })).body
      const saved = await m.call('PUT', `/api/v1/proxies/${p.id}/workflow`, { body: { workflow, enabled } })
      if (saved.status !== 200) { t.equal(saved.status, 400, `seed ${seed}: a refused save is a 400`); continue }
      accepted++
      const first = (await m.call('GET', `/api/v1/collections/${c.id}/export`, { role: 'editor' })).body
      t.same(first.collections[0].proxies[0].workflow, saved.body.workflow, `seed ${seed}: the export holds the saved definition`)
      first.collections[0].collection.base_path = `/rt${seed}-back`
      const imported = await upload(m, first)
      if (!t.equal(imported.status, 201, `seed ${seed}: the export imports back (${JSON.stringify(imported.body.error?.details ?? null)})`)) continue
      const second = (await m.call('GET', `/api/v1/collections/${imported.body.items[0].id}/export`, { role: 'editor' })).body
      delete first.exported_at
      delete second.exported_at
      t.same(second, first, `seed ${seed}: the second export equals the first`)
    }
    t.ok(accepted >= RUNS / 2, `most generated definitions are accepted (${accepted} of ${RUNS})`)
  })
}
