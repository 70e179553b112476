/**
 * cron_trigger for real: two instances on one PostgreSQL database and one Redis
 * run each schedule slot exactly once, keep going when one instance is closed
 * mid-run, and stop within a second when the proxy is unpublished on the other
 * instance. One instance on the embedded store runs the same code in-process.
 * Gateway traffic to a cron proxy's path is forwarded to its backend.
 */
import t, { type Test } from 'tap'
import { backend, cluster, edge, node, publishedProxy, sleep, triggerRuns } from './cluster.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

const cronWorkflow = (delayMs = 0) => ({
  nodes: [
    node('tick', 'cron_trigger', { cron_expression: '* * * * * *', timezone: 'Europe/Paris' }),
    ...(delayMs > 0 ? [node('wait', 'delay_node', { delay_ms: delayMs })] : []),
    node('note', 'set_node', { values: { slot: '{{tick.triggered_at}}' } })
  ],
  edges: delayMs > 0 ? [edge('tick', 'wait'), edge('wait', 'note')] : [edge('tick', 'note')],
  runtime_settings: { save_on_success: true, save_on_error: true, timeout_ms: 60_000 }
})

const slotsOf = (runs: any[]) => runs.map(r => Date.parse(r.trigger_output.triggered_at as string))

/** Every slot between the first and the last exactly once: one second apart, none missing, none twice. */
function assertConsecutive (t: Test, slots: number[], what: string): void {
  const gaps = slots.slice(1).map((s, i) => s - slots[i]!) // slots[i] is the slot before s
  t.same(gaps.filter(g => g !== 1000), [], `${what}: one run per second-slot, no gap and no double (${slots.length} runs)`)
}

t.test('two instances, PostgreSQL and Redis: each slot runs once; unpublish on B stops A within a second; A carries on when B closes mid-run', async t => {
  // No configuration polling to speak of: only the trigger sync broadcast can start and stop B's and A's schedules in time.
  const [a, b] = await cluster(t, 'postgres', 2, { CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, CONFIG_POLL_INTERVAL_MS: '600000' })
  const up = await backend(t)
  const p = await publishedProxy(a, up, 'cron2')
  const trigger = `/triggers/${p.id as string}`
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: cronWorkflow(400) })).status, 200)
  // Warm each instance's worker thread first: on a loaded machine a cold pool can make the first slots wait past their deadline.
  for (const w of [a, b]) t.equal((await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: { triggered_at: 'x' } })).status, 200)
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true })).status, 200)

  const gw = await fetch(`${a.gateway}${p.base as string}/run`, { headers: { connection: 'close' } })
  t.equal(gw.status, 200, 'a request to the cron proxy is forwarded to its backend')
  t.equal(await gw.text(), 'backend', 'gateway traffic never starts the cron workflow')

  const health = await b.until(trigger, h => h.state === 'running' && h.last_run_status === 'success')
  t.match(health, { trigger_type: 'cron_trigger', workflow_id: p.workflow_id, state: 'running', next_slot: /^\d{4}-/, owner: /^[0-9a-f]{12}$/ }, 'health seen from the other instance')

  await sleep(4000)
  let runs = await triggerRuns(a, p.workflow_id)
  t.ok(runs.length >= 4, `runs happened (${runs.length})`)
  const ok = runs.at(-1)
  t.match(ok, { mode: 'trigger', status: 'success', trigger_output: { trigger: 'cron', schedule: '* * * * * *', timezone: 'Europe/Paris' } })
  t.equal(ok.trigger_output.run_id, ok.id, 'run_id is the execution id')
  t.same(ok.nodes.find((x: any) => x.node_id === 'note').output, { output: { slot: ok.trigger_output.triggered_at } }, 'downstream nodes read the trigger output')
  assertConsecutive(t, slotsOf(runs), 'both instances up')

  // Unpublished on B: A stops within a second.
  t.equal((await b.api('PUT', `/proxies/${p.id as string}`, { status: 'draft' }, 'admin')).status, 200)
  const stoppedAt = Date.now()
  await sleep(2500)
  runs = await triggerRuns(a, p.workflow_id)
  t.same(runs.filter(r => Date.parse(r.started_at as string) > stoppedAt + 1000).map(r => r.trigger_output.triggered_at), [], 'no run starts more than a second after unpublishing')
  t.match((await a.api('GET', trigger)).body, { state: 'stopped', stopped_reason: 'the proxy is a draft', next_slot: null })

  // Published again on A; then B closes while a run (400 ms) may be in flight: A carries on.
  t.equal((await a.api('PUT', `/proxies/${p.id as string}`, { status: 'published' }, 'admin')).status, 200)
  await a.until(trigger, h => h.state === 'running')
  await sleep(2000)
  const closedAt = Date.now()
  await b.s.close()
  await sleep(3500)
  runs = await triggerRuns(a, p.workflow_id)
  const after = slotsOf(runs).filter(s => s > closedAt + 1000)
  t.ok(after.length >= 2, `A kept running after B closed (${after.length})`)
  assertConsecutive(t, after, 'after B closed')
  t.equal(new Set(slotsOf(runs)).size, runs.length, 'no slot ran twice overall')
})
