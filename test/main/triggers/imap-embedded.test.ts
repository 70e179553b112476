/**
 * imap_trigger against a real Dovecot without IDLE, on the embedded store:
 * polling, a wrong password shown as `failing` until the credential is fixed,
 * UID de-duplication across a restart and a UIDVALIDITY change, mark_as_seen false.
 */
import t from 'tap'
import { startDovecot } from '../../helpers/dovecot.js'
import { instances, publishedProxy, sleep, triggerRuns } from './cluster.js'
import { eml, imapCredential, imapWorkflow, runsUntil } from './imap-helpers.js'

// Generous: these tests start whole services and real servers on a machine that may be loaded.
t.setTimeout(300_000)

t.test('embedded store, no IDLE: polling, a wrong password shows as failing until fixed, no rerun after a restart or a UIDVALIDITY change, mark_as_seen false', async t => {
  const d = await startDovecot({ idle: false })
  t.teardown(() => d.stop())
  await d.createMailbox('Orders')
  const start = await instances(t, 'embedded')
  let w = await start()
  const p = await publishedProxy(w, 'http://127.0.0.1:9', 'imap1')
  const trigger = `/triggers/${p.id as string}`
  const cred = await imapCredential(w, d, 'wrong-password')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { workflow: imapWorkflow(cred, { mailbox: 'Orders', poll_interval_seconds: 1 }) })).status, 200)
  t.equal((await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { input: { subject: 'warm' } })).status, 200)
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true })).status, 200)
  const failing = await w.until(trigger, h => h.state === 'failing')
  t.match(failing.last_error, /login|auth/i, 'the health route says why')
  t.notMatch(failing.last_error, /wrong-password/, 'never the password')
  const fixed = await w.api('PUT', `/credentials/${cred}`, { config: { host: d.host, port: d.port, username: d.user, password: d.password, tls: { secure: false, reject_unauthorized: false } } }, 'admin')
  t.equal(fixed.status, 200, JSON.stringify(fixed.body))
  await w.until(trigger, h => h.state === 'running')

  await d.deliver(eml(1), 'Orders')
  await d.deliver(eml(2), 'Orders')
  let runs = await runsUntil(w, p.workflow_id, 2)
  t.same(runs.map(r => r.trigger_output.uid).sort(), [1, 2], 'polling found both')
  t.notOk((await d.flags(1, 'Orders')).includes('\\Seen'), 'mark_as_seen false: left unseen')

  /** Restarts the service (with `meanwhile` done while it is down); nothing already there runs again; a new email runs. */
  const restart = async (meanwhile: () => Promise<void>, runsBefore: number, n: number, what: string) => {
    await w.s.close()
    await meanwhile()
    w = await start()
    await w.until(trigger, h => h.state === 'running')
    await sleep(1500)
    t.equal((await triggerRuns(w, p.workflow_id)).length, runsBefore, what)
    await d.deliver(eml(n), 'Orders')
    return await runsUntil(w, p.workflow_id, runsBefore + 1)
  }
  runs = await restart(async () => {}, 2, 3, 'no rerun after a restart')
  t.equal(runs.filter(r => r.trigger_output.uid === 3).length, 1)

  // UIDVALIDITY changes (the mailbox is recreated, UIDs start again at 1): what is there is not run again.
  runs = await restart(async () => {
    await d.deleteMailbox('Orders')
    await d.createMailbox('Orders')
    await d.deliver(eml(1, ' (copy)'), 'Orders')
  }, 3, 4, 'after a UIDVALIDITY change, the emails already there do not run')
  t.match(runs.find(r => r.trigger_output.uid === 2 && r.trigger_output.subject === 'Commande nº4'), { status: 'success' }, 'a new email after the change runs')
})
