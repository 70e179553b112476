/**
 * Trigger sync across a Redis outage (spec: after a lost and restored shared-cache
 * connection, trigger schedulers run a bootstrap sync). Two instances on one
 * PostgreSQL database and a throwaway Redis, configuration polling off: while
 * Redis is down no cron slot can be claimed, so nothing runs (never a double);
 * a workflow unpublished on A meanwhile (the broadcast cannot reach B) is
 * stopped on B by the bootstrap sync once Redis is back.
 */
import t from 'tap'
import { startRedisServer } from '../cache/redis-server.js'
import { cluster, edge, node, publishedProxy, sleep, triggerRuns } from './cluster.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

t.test('Redis lost and restored: no runs while it is away; the bootstrap sync applies what the lost broadcast carried', async t => {
  const redis = await startRedisServer()
  t.teardown(() => redis.close())
  const [a, b] = await cluster(t, 'postgres', 2, { CACHE_TYPE: 'redis', REDIS_URL: redis.url, CONFIG_POLL_INTERVAL_MS: '600000' })
  const p = await publishedProxy(a, 'http://127.0.0.1:9', 'outage')
  const workflow = {
    nodes: [node('tick', 'cron_trigger', { cron_expression: '* * * * * *' }), node('note', 'set_node', { values: { at: '{{tick.triggered_at}}' } })],
    edges: [edge('tick', 'note')],
    runtime_settings: { save_on_success: true, save_on_error: true }
  }
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow })).status, 200)
  for (const w of [a, b]) t.equal((await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: {} })).status, 200)
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true })).status, 200)
  await b.until(`/triggers/${p.id as string}`, h => h.last_run_status === 'success')

  await redis.stop()
  const downAt = Date.now()
  t.equal((await a.api('PUT', `/proxies/${p.id as string}`, { status: 'draft' }, 'admin')).status, 200, 'unpublished on A while Redis is down')
  await sleep(3000)
  const during = (await triggerRuns(a, p.workflow_id)).filter(r => Date.parse(r.trigger_output.triggered_at as string) > downAt + 1000)
  t.same(during.map(r => r.trigger_output.triggered_at), [], 'no slot runs while no instance can claim it')

  await redis.start()
  // B reconnects on its own and reads the store; give it time, then nothing more may run.
  await sleep(8000)
  const settled = (await triggerRuns(a, p.workflow_id)).length
  await sleep(3000)
  t.equal((await triggerRuns(a, p.workflow_id)).length, settled, 'after the bootstrap sync, B no longer runs the unpublished workflow')
  t.match((await b.api('GET', `/triggers/${p.id as string}`, undefined, 'viewer')).body, { state: 'stopped', stopped_reason: 'the proxy is a draft' })
})
