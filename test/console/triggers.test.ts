/**
 * The Triggers page in a real browser: a cron workflow shows as running with its last run and
 * next slot, an IMAP trigger whose server refuses connections shows as failing with the error,
 * and a workflow disabled by another client over REST shows as stopped, with the reason, without
 * a reload (the event stream's proxy_workflow and trigger_status events refetch the list).
 */
import t from 'tap'
import { launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
import { freePort } from '../helpers/ports.js'
import { edge, node } from '../main/triggers/cluster.js'

t.setTimeout(180_000)

t.test('trigger health, live', async t => {
  const svc = await startService(t)
  const ok = (r: { status: number, body: any }, status = 200) => { if (r.status !== status) throw new Error(`${r.status} ${JSON.stringify(r.body)}`); return r.body }
  const c = ok(await svc.call('POST', '/collections', { name: 'jobs', base_path: '/jobs', upstream_url: 'http://127.0.0.1:9', auth_required: false }), 201)
  const proxy = async (name: string, workflow: unknown) => {
    const p = ok(await svc.call('POST', '/proxies', { collection_id: c.id, name, methods: ['GET'], path: `/${name}`, status: 'published' }), 201)
    ok(await svc.call('PUT', `/proxies/${p.id as string}/workflow`, { workflow }))
    ok(await svc.call('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true }))
    return p
  }
  const ticker = await proxy('ticker', {
    nodes: [node('tick', 'cron_trigger', { cron_expression: '* * * * * *' }), node('note', 'set_node', { values: { at: '{{tick.triggered_at}}' } })],
    edges: [edge('tick', 'note')]
  })
  const closed = await freePort()
  const cred = ok(await svc.call('POST', '/credentials', {
    name: 'mail', type: 'imap', config: { host: '127.0.0.1', port: closed, username: 'orders', password: 'secret', tls: { secure: false } }
  }), 201)
  await proxy('mailbox', {
    nodes: [node('mail', 'imap_trigger', { credentials_id: cred.id, poll_interval_seconds: 3600 }), node('note', 'set_node', { values: { s: '{{mail.subject}}' } })],
    edges: [edge('mail', 'note')]
  })

  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'viewer')
  await page.getByRole('link', { name: 'Triggers' }).click()
  const row = (name: string) => page.getByRole('row', { name })
  await row('ticker').getByText('running').waitFor()
  t.ok(await row('ticker').getByText('Schedule').isVisible(), 'the trigger kind')
  await row('ticker').getByText('success').waitFor({ timeout: 60_000 })
  t.pass('the cron trigger runs and its last run shows')
  await row('mailbox').getByText('failing').waitFor({ timeout: 60_000 })
  t.match(await row('mailbox').textContent(), /IMAP.*failing.*ECONNREFUSED|IMAP.*failing.*refused|IMAP.*failing.*connect/i, 'the IMAP trigger is failing and says why')
  await screenshot(page, 'triggers')

  // Another client disables the cron workflow: the page follows without a reload.
  ok(await svc.call('PUT', `/proxies/${ticker.id as string}/workflow`, { enabled: false }))
  await row('ticker').getByText('the workflow is disabled').waitFor({ timeout: 60_000 })
  t.ok(await row('ticker').getByText('stopped').isVisible(), 'stopped, with the reason, live')
  t.equal(await page.getByRole('button', { name: /Edit|Delete|New/ }).count(), 0, 'a viewer gets no edit controls here')

  // In the builder, test-listen speaks of what the trigger waits for: a cron schedule fires once at once.
  const editor = await signedIn(browser, svc, 'editor')
  await editor.goto(`${svc.console}/proxies/${ticker.id as string}/workflow`)
  t.equal(await editor.getByRole('button', { name: 'Listen for a request' }).count(), 0, 'no HTTP wording for a cron workflow')
  await editor.getByRole('button', { name: 'Fire the schedule once' }).click()
  const out = editor.getByLabel('Output of note')
  await out.waitFor({ timeout: 60_000 })
  t.match(await out.textContent(), /success/, 'the schedule fired once and the workflow ran from it')
  t.match(await editor.getByText(/The schedule \* \* \* \* \* \* fires once now|Schedule fired/).first().textContent(), /schedule/i, 'the notice says what happened')
})
