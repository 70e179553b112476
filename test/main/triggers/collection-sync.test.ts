/**
 * A collection change reaches the triggers of that collection's proxies on every instance (the
 * trigger sync reads that collection, not the whole store): disabling a collection stops its cron
 * trigger, enabling it starts it again, and a collection imported from a file with an enabled cron
 * workflow starts its trigger. Two instances on one PostgreSQL database and one Redis, with
 * configuration polling off, so only the sync broadcasts can carry the changes.
 */
import t from 'tap'
import { backend, cluster, edge, node, publishedProxy } from './cluster.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'

t.setTimeout(300_000)

const cronWorkflow = {
  nodes: [node('tick', 'cron_trigger', { cron_expression: '* * * * * *' }), node('note', 'set_node', { values: { slot: '{{tick.triggered_at}}' } })],
  edges: [edge('tick', 'note')],
  runtime_settings: { save_on_success: false, save_on_error: true, timeout_ms: 60_000 }
}

t.test('disable, enable and import a collection: its triggers follow on both instances', async t => {
  const [a, b] = await cluster(t, 'postgres', 2, { CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, CONFIG_POLL_INTERVAL_MS: '600000' })
  const up = await backend(t)
  const p = await publishedProxy(a, up, 'ticking')
  const trigger = `/triggers/${p.id as string}`
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: cronWorkflow, enabled: true })).status, 200)
  await b.until(trigger, h => h.state === 'running')
  t.pass('running')

  t.equal((await b.api('PUT', `/collections/${p.collection_id as string}/status`, { status: 'disabled' }, 'admin')).status, 200)
  t.match(await a.until(trigger, h => h.state === 'stopped'), { state: 'stopped' }, 'disabling the collection on B stops the trigger')
  t.equal((await a.api('PUT', `/collections/${p.collection_id as string}/status`, { status: 'active' }, 'admin')).status, 200)
  t.match(await b.until(trigger, h => h.state === 'running'), { state: 'running' }, 'enabling it on A starts it again')

  // The same collection exported and imported under another base path: its proxy's trigger starts too.
  const exported = (await a.api('GET', `/collections/${p.collection_id as string}/export`, undefined, 'admin')).body
  exported.collections[0].collection.base_path = '/ticking-copy'
  exported.collections[0].collection.name = 'ticking-copy'
  const imported = await b.api('POST', '/collections/import?keep_status=true', exported, 'admin')
  t.equal(imported.status, 201)
  const copy = (await a.api('GET', `/proxies?collection_id=${imported.body.items[0].id as string}`, undefined, 'admin')).body.items[0]
  t.match(await a.until(`/triggers/${copy.id as string}`, h => h.state === 'running'), { state: 'running' }, 'the imported proxy\'s trigger runs')
})
