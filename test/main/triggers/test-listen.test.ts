/**
 * Test-listen for the triggers that do not come through the gateway, on a
 * disabled workflow of a draft proxy: cron fires once at once; IMAP waits,
 * read-only, for the first unseen email; both stream the captured output and
 * the run over SSE (broker_consumer's test-listen is in kafka.test.ts).
 */
import t, { type Test } from 'tap'
import { startDovecot } from '../../helpers/dovecot.js'
import { reader } from '../../helpers/sse.js'
import type { WorkflowService } from '../workflows/service.js'
import { edge, instances, node, sleep } from './cluster.js'
import { eml, imapCredential } from './imap-helpers.js'
import { startMockKafka } from '../../helpers/kafka.js'
import { freePort } from '../../helpers/ports.js'
import { recordingLogger } from '../cache/shared.js'
import { startService } from '../workflows/service.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

async function draftProxy (w: WorkflowService, name: string): Promise<any> {
  const c = (await w.api('POST', '/collections', { name, base_path: `/${name}`, upstream_url: 'http://127.0.0.1:9', auth_required: false }, 'admin')).body
  return (await w.api('POST', '/proxies', { collection_id: c.id, name, methods: ['GET'], path: '/x' }, 'admin')).body
}

/** Starts a listen and reads its stream to the end. */
async function listen (t: Test, w: WorkflowService, workflowId: string, meanwhile: () => Promise<void> = async () => {}): Promise<Array<{ event?: string, data: any }>> {
  const r = await w.api('POST', `/workflows/${workflowId}/trigger-test/listen`, { timeout_seconds: 60 })
  t.equal(r.status, 200, JSON.stringify(r.body))
  const res = await fetch(`http://127.0.0.1:${w.s.managementPort}${r.body.stream as string}`, { headers: { authorization: `Bearer ${await w.s.issueToken!('ed', 'editor')}`, connection: 'close' } })
  t.equal(res.status, 200)
  const sse = reader(res)
  await meanwhile()
  const frames: Array<{ event?: string, data: any }> = []
  for (let i = 0; i < 40; i++) {
    const f = await sse.nextData(30_000)
    if (f === undefined) break
    frames.push({ event: f.event, data: JSON.parse(f.data.join('\n')) })
  }
  return frames
}

t.test('cron and IMAP test-listen stream the captured output and the run', async t => {
  const d = await startDovecot()
  t.teardown(() => d.stop())
  const w = await (await instances(t, 'embedded'))()

  const cron = await draftProxy(w, 'tlcron')
  t.equal((await w.api('PUT', `/proxies/${cron.id as string}/workflow`, {
    workflow: { nodes: [node('tick', 'cron_trigger', { cron_expression: '0 9 * * 1', timezone: 'Europe/Paris' }), node('note', 'set_node', { values: { at: '{{tick.triggered_at}}' } })], edges: [edge('tick', 'note')] }
  })).status, 200)
  let frames = await listen(t, w, cron.workflow_id)
  t.same(frames.map(f => f.event), ['listening', 'captured', 'node_started', 'node_finished', 'node_started', 'node_finished', 'execution'], 'cron fires once at once')
  t.match(frames[1]?.data, { trigger_output: { trigger: 'cron', schedule: '0 9 * * 1', timezone: 'Europe/Paris', triggered_at: /Z$/ } })
  t.match(frames.at(-1)!.data, { mode: 'test', status: 'success' })
  t.equal(frames.at(-1)!.data.id, frames[1]?.data.trigger_output.run_id, 'run_id names the execution')

  const mail = await draftProxy(w, 'tlmail')
  const cred = await imapCredential(w, d)
  t.equal((await w.api('PUT', `/proxies/${mail.id as string}/workflow`, {
    workflow: { nodes: [node('mail', 'imap_trigger', { credentials_id: cred, poll_interval_seconds: 3600 }), node('note', 'set_node', { values: { s: '{{mail.subject}}' } })], edges: [edge('mail', 'note')] }
  })).status, 200)
  frames = await listen(t, w, mail.workflow_id, async () => { await sleep(1000); await d.deliver(eml(7)) })
  t.same(frames.map(f => f.event), ['listening', 'captured', 'node_started', 'node_finished', 'node_started', 'node_finished', 'execution'], 'the email arrived, was captured and ran')
  t.match(frames[1]?.data, { trigger_output: { subject: 'Commande nº7', body_text: 'Café crème, order 7', uid: 1, mailbox: 'Inbox' } })
  t.match(frames.at(-1)!.data, { mode: 'test', status: 'success', nodes: [{ node_id: 'mail' }, { node_id: 'note', output: { output: { s: 'Commande nº7' } } }] })
  t.notOk((await d.flags(1)).includes('\\Seen'), 'read-only: the email stays unseen')
})

t.test('broker test-listen: a throwaway group from the latest offset captures the next message and runs it', async t => {
  const k = await startMockKafka({ tlorders: 1 })
  t.teardown(() => k.stop())
  await k.produce('tlorders', [{ value: '{"old":true}' }])
  const start = await instances(t, 'embedded')
  const w = await start()
  const broker = await draftProxy(w, 'tlbroker')
  const kafka = (await w.api('POST', '/credentials', { name: 'k', type: 'kafka', config: { brokers: k.brokers } }, 'admin')).body
  t.equal((await w.api('PUT', `/proxies/${broker.id as string}/workflow`, {
    workflow: { nodes: [node('in', 'broker_consumer', { credentials_id: kafka.id, topic: 'tlorders' }), node('note', 'set_node', { values: { sku: '{{in.message.sku}}' } })], edges: [edge('in', 'note')] }
  })).status, 200)
  const frames = await listen(t, w, broker.workflow_id, async () => {
    // Produced repeatedly until captured: the listen's group joins a moment after the stream opens.
    for (let i = 0; i < 20; i++) { await k.produce('tlorders', [{ key: 'k', value: '{"sku":"pen"}' }]); await sleep(500) }
  })
  t.same(frames.map(f => f.event), ['listening', 'captured', 'node_started', 'node_finished', 'node_started', 'node_finished', 'execution'])
  t.match(frames[1]?.data, { trigger_output: { topic: 'tlorders', partition: 0, key: 'k', message: { sku: 'pen' } } }, 'a new message, not the one produced before the listen')
  t.match(frames.at(-1)!.data, { mode: 'test', status: 'success', nodes: [{ node_id: 'in' }, { node_id: 'note', output: { output: { sku: 'pen' } } }] })
})

t.test('broker test-listen with an unreachable broker: 502 naming the broker and the cause, and a log line', async t => {
  const { logger, lines } = recordingLogger()
  const w = await startService(t, 'embedded', {}, { logger })
  const proxy = await draftProxy(w, 'tlnobroker')
  const port = await freePort()
  const kafka = (await w.api('POST', '/credentials', { name: 'gone', type: 'kafka', config: { brokers: [`127.0.0.1:${port}`] } }, 'admin')).body
  t.equal((await w.api('PUT', `/proxies/${proxy.id as string}/workflow`, {
    workflow: { nodes: [node('in', 'broker_consumer', { credentials_id: kafka.id, topic: 'orders' }), node('note', 'set_node', { values: { v: 1 } })], edges: [edge('in', 'note')] }
  })).status, 200)
  const r = await w.api('POST', `/workflows/${proxy.workflow_id as string}/trigger-test/listen`, { timeout_seconds: 60 })
  t.equal(r.status, 502, JSON.stringify(r.body))
  t.equal(r.body.error.code, 'bad_gateway')
  t.match(r.body.error.message, new RegExp(`^The Kafka broker 127\\.0\\.0\\.1:${port} could not be reached: .*ECONNREFUSED`))
  const logged = lines.find(l => l.msg === 'trigger test-listen failed')
  t.match(logged, { level: 40, workflow_id: proxy.workflow_id, trigger_type: 'broker_consumer', code: 'bad_gateway', err: r.body.error.message }, 'the failure is logged with the same words')
})
