/**
 * imap_trigger against a real Dovecot, two instances on PostgreSQL and Redis:
 * one owner, takeover when the owner goes, each email run once, IDLE (the poll
 * interval is too long to matter), mark_as_seen, decoded bodies.
 */
import t from 'tap'
import { startDovecot } from '../../helpers/dovecot.js'
import { instances, publishedProxy, sleep, triggerRuns } from './cluster.js'
import { eml, imapCredential, imapWorkflow, runsUntil } from './imap-helpers.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

t.test('two instances, PostgreSQL and Redis: one owner, IDLE, mark_as_seen, takeover, each email once', async t => {
  const d = await startDovecot()
  t.teardown(() => d.stop())
  const start = await instances(t, 'postgres', { CACHE_TYPE: 'redis' })
  const a = await start()
  const p = await publishedProxy(a, 'http://127.0.0.1:9', 'imap2')
  const trigger = `/triggers/${p.id as string}`
  const cred = await imapCredential(a, d)
  // A long poll interval: only IDLE can bring an email in quickly.
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: imapWorkflow(cred, { poll_interval_seconds: 3600, mark_as_seen: true }), enabled: true })).status, 200)
  const first = await a.until(trigger, h => h.state === 'running' && h.owner !== null)
  const b = await start()
  t.equal((await b.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: { subject: 'warm' } })).status, 200)

  await d.deliver(eml(1))
  let runs = await runsUntil(a, p.workflow_id, 1)
  t.match(runs[0], {
    mode: 'trigger',
    status: 'success',
    trigger_output: {
      subject: 'Commande nº1', from: '"René" <rene@example.test>', to: '"Orders" <orders@example.test>', date: '2026-11-23T08:00:00.000Z',
      body_text: 'Café crème, order 1', body_html: '<p>Café 1</p>', uid: 1, mailbox: 'Inbox'
    }
  }, 'decoded headers and bodies (QP ISO-8859-1, base64 UTF-8, encoded words)')
  t.equal(runs[0].trigger_output.run_id, runs[0].id)
  t.same(Object.keys(runs[0].trigger_output).sort(), ['body_html', 'body_text', 'date', 'from', 'mailbox', 'run_id', 'subject', 'to', 'uid'], 'exactly the spec\'s outputs')
  t.ok((await d.flags(1)).includes('\\Seen'), 'mark_as_seen: the email is marked seen')
  t.equal((await b.api('GET', trigger, undefined, 'viewer')).body.owner, first.owner, 'one owner, seen from both instances')

  // The owner (A, started first) goes: B takes over within a few seconds.
  await a.s.close()
  await d.deliver(eml(2))
  runs = await runsUntil(b, p.workflow_id, 2)
  const h = await b.until(trigger, x => x.state === 'running' && x.owner !== first.owner)
  t.not(h.owner, first.owner, 'the other instance owns the trigger now')
  await d.deliver(eml(3))
  runs = await runsUntil(b, p.workflow_id, 3)
  await sleep(1500)
  runs = await triggerRuns(b, p.workflow_id)
  t.same(runs.map(r => r.trigger_output.uid), [1, 2, 3], 'each email ran once, none twice')
})
