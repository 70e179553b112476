/**
 * broker_consumer on two instances sharing one PostgreSQL and one Redis, against librdkafka's mock
 * cluster: the instances share the topic's partitions through the consumer group, an instance that
 * joins or leaves mid-stream moves partitions while runs are in progress, and still every message
 * runs exactly once (in both commit modes).
 */
import t from 'tap'
import { startMockKafka } from '../../helpers/kafka.js'
import { edge, instances, node, publishedProxy, sleep, triggerRuns } from './cluster.js'
import type { WorkflowService } from '../workflows/service.js'

t.setTimeout(300_000)

const workflow = (credentialsId: string, topic: string, group: string, commitMode: string) => ({
  nodes: [
    node('in', 'broker_consumer', { credentials_id: credentialsId, topic, consumer_group: group, commit_mode: commitMode }),
    // Slow enough that a rebalance lands while runs are in progress.
    node('wait', 'delay_node', { delay_ms: 400 }),
    node('note', 'set_node', { values: { n: '{{in.message.n}}' } })
  ],
  edges: [edge('in', 'wait'), edge('wait', 'note')],
  runtime_settings: { save_on_success: true, save_on_error: true }
})

async function until (what: string, ok: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await ok()) return
    await sleep(100)
  }
  throw new Error(`timed out waiting for ${what}`)
}

for (const commitMode of ['after_success', 'per_message']) {
  t.test(`${commitMode}: partitions shared and moved mid-stream, every message run exactly once`, async t => {
    const k = await startMockKafka({ orders: 2 })
    t.teardown(() => k.stop())
    const start = await instances(t, 'postgres', { CACHE_TYPE: 'redis' })
    const a = await start()
    const cred = (await a.api('POST', '/credentials', { name: 'kafka', type: 'kafka', config: { brokers: k.brokers } }, 'admin')).body.id
    const p = await publishedProxy(a, 'http://127.0.0.1:9', `k2${commitMode.replace('_', '')}`)
    const group = `g-two-${commitMode}`
    t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: workflow(cred, 'orders', group, commitMode), enabled: true })).status, 200)
    const total = 24
    await k.produce('orders', Array.from({ length: total }, (_, i) => ({ value: JSON.stringify({ n: i }), partition: i % 2 })))
    const runs = async (w: WorkflowService) => await triggerRuns(w, p.workflow_id as string)

    // A alone, then B joins while A's runs are in progress: the group rebalances.
    await until('A\'s first runs', async () => (await runs(a)).length >= 3)
    const b = await start()
    // Trigger health names the instance that ran the last message: both appear while both are in the group.
    const owners = new Set<string>()
    await until('runs on both instances', async () => {
      const h = (await a.api('GET', `/triggers/${p.id as string}`, undefined, 'viewer')).body
      if (typeof h.owner === 'string' && h.last_run_at !== null) owners.add(h.owner)
      return owners.size === 2 && (await runs(a)).length >= 12
    })
    t.equal(owners.size, 2, 'both instances ran messages: the group shares the partitions')
    // B leaves mid-stream: its partition goes back to A.
    await b.s.close()
    await until('every message run', async () => (await runs(a)).length >= total)
    await sleep(3000)
    const all = await runs(a)
    const seen = all.map(r => `${r.trigger_output.partition as number}:${r.trigger_output.offset as string}`)
    t.equal(all.length, total, `exactly ${total} runs (no message ran twice): ${seen.sort().join(' ')}`)
    t.equal(new Set(seen).size, total, 'one run per partition and offset')
    t.ok(all.every(r => r.status === 'success'))
    t.same(all.map(r => r.trigger_output.message.n).sort((x: number, y: number) => x - y), Array.from({ length: total }, (_, i) => i), 'every message ran')
  })
}
