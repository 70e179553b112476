/**
 * One instance on the embedded store without Redis: the same trigger code runs
 * in-process. A cron workflow runs while enabled, stops when disabled, the
 * health route and the event stream say so, /metrics counts the runs, and
 * gateway traffic to a manual_trigger proxy goes to the backend.
 */
import t from 'tap'
import { openStream } from '../../helpers/sse.js'
import { backend, cluster, edge, node, publishedProxy, sleep, triggerRuns } from './cluster.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

t.test('embedded store, no Redis: cron runs while enabled, stops when disabled; trigger_status on the stream; metrics', async t => {
  const [w] = await cluster(t, 'embedded', 1)
  const up = await backend(t)
  const p = await publishedProxy(w, up, 'cron1')
  const trigger = `/triggers/${p.id as string}`
  const token = await w.s.issueToken!('viewer-user', 'viewer')
  const { r: stream } = await openStream(t, `http://127.0.0.1:${w.s.managementPort}/api/v1/events/stream`, { authorization: `Bearer ${token}` })
  await stream.next() // the starting position

  const workflow = {
    nodes: [node('tick', 'cron_trigger', { cron_expression: '*/1 * * * * *' }), node('note', 'set_node', { values: { at: '{{tick.triggered_at}}' } })],
    edges: [edge('tick', 'note')],
    runtime_settings: { save_on_success: true }
  }
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow })).status, 200)
  // Warm the worker thread: on a loaded machine a cold pool can make the first slots wait past their deadline.
  t.equal((await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: { triggered_at: 'x' } })).status, 200)
  t.match((await w.api('GET', trigger)).body, { state: 'stopped', stopped_reason: 'the workflow is disabled' }, 'saved but disabled: not running')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true })).status, 200)

  const events: any[] = []
  const waitEvent = async (state: string) => {
    for (let i = 0; i < 40; i++) {
      const f = await stream.nextData(1000)
      if (f === undefined) continue
      const e = JSON.parse(f.data[0]!)
      events.push(e)
      if (e.resource_kind === 'trigger_status' && e.state === state) return e
    }
    return undefined
  }
  t.match(await waitEvent('running'), { resource_kind: 'trigger_status', proxy_id: p.id, workflow_id: p.workflow_id, trigger_type: 'cron_trigger', state: 'running', previous_state: 'stopped', schema_version: 1 })

  const h = await w.until(trigger, b => b.last_run_status === 'success')
  t.match(h, { state: 'running', trigger_type: 'cron_trigger', timezone: undefined, next_slot: /Z$/ })
  const list = await w.api('GET', '/triggers', undefined, 'viewer')
  t.equal(list.status, 200)
  t.match(list.body, { items: [{ proxy_id: p.id, state: 'running' }], next_cursor: null })
  t.equal((await w.api('GET', '/triggers/nope', undefined, 'viewer')).status, 404)

  await sleep(2000)
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: false })).status, 200)
  const offAt = Date.now()
  t.match(await waitEvent('stopped'), { resource_kind: 'trigger_status', state: 'stopped', previous_state: 'running' })
  await sleep(2000)
  const runs = await triggerRuns(w, p.workflow_id)
  t.ok(runs.length >= 2, `runs while enabled (${runs.length})`)
  t.same(runs.filter(r => Date.parse(r.started_at as string) > offAt + 1000), [], 'none after disabling')
  t.equal(new Set(runs.map(r => r.trigger_output.triggered_at)).size, runs.length, 'one run per slot')
  const newest = runs.reduce((a, b) => Date.parse(a.started_at as string) > Date.parse(b.started_at as string) ? a : b)
  t.match((await w.api('GET', trigger)).body, { state: 'stopped', stopped_reason: 'the workflow is disabled', last_run_status: 'success', last_execution_id: newest.id },
    'a stopped trigger still says when it last ran, from the execution records')

  const metrics = await (await fetch(`http://127.0.0.1:${w.s.managementPort}/metrics`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } })).text()
  t.match(metrics, /gatehouse_trigger_runs_total\{kind="cron_trigger",status="success"\} [1-9]/)

  // manual_trigger: gateway traffic does not start it either.
  const m = await publishedProxy(w, up, 'manual1')
  t.equal((await w.api('PUT', `/proxies/${m.id as string}/workflow`, {
    workflow: { nodes: [node('go', 'manual_trigger'), node('reply', 'response_node', { status: 201, body: 'from workflow' })], edges: [edge('go', 'reply')] },
    enabled: true
  })).status, 200)
  await w.s.reloadRoutes()
  const gw = await fetch(`${w.gateway}${m.base as string}/run`, { headers: { connection: 'close' } })
  t.equal(gw.status, 200)
  t.equal(await gw.text(), 'backend', 'a manual_trigger proxy forwards gateway traffic to its backend')
})
