/**
 * The console's request log with tracing on: each entry shows its trace id, a click on it lists
 * that trace's requests only, and "Show all" returns to every request.
 */
import t from 'tap'
import { launchBrowser, signedIn, startService } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { eventually } from '../helpers/wait.js'

t.test('a request log entry shows its trace id and opens that trace', async t => {
  const receiver = await startOtlpReceiver(t)
  const backend = await startBackend(t)
  const svc = await startService(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' })
  const c = await svc.call('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  await svc.call('POST', '/proxies', { collection_id: c.body.id, name: 'items', methods: ['GET'], path: '/items', status: 'published' })
  await svc.service.reloadRoutes()
  const traces = ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2']
  for (const trace of traces) {
    const r = await fetch(`${svc.gateway}/shop/items`, { headers: { traceparent: `00-${trace}-00f067aa0ba902b7-01`, connection: 'close' } })
    t.equal(r.status, 200)
    await r.text()
  }
  t.ok(await eventually(async () => (await svc.call('GET', '/request-logs', undefined, 'viewer')).body.items.length >= 2, undefined, 100), 'both requests are in the request log')

  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'viewer')
  await page.goto(`${svc.console}/request-logs`)
  const first = page.getByRole('button', { name: `Trace ${traces[0]}` })
  await first.waitFor()
  t.equal(await page.getByRole('button', { name: `Trace ${traces[1]}` }).count(), 1, 'every entry shows its trace id')
  await first.click()
  await page.getByText(`Requests of trace ${traces[0]}`).waitFor()
  await page.getByRole('button', { name: `Trace ${traces[1]}` }).waitFor({ state: 'detached' })
  // The filtered list arrives after the heading: wait for its entry before counting.
  await first.waitFor()
  t.equal(await page.getByRole('button', { name: `Trace ${traces[0]}` }).count(), 1, "only that trace's request is listed")
  await page.getByRole('button', { name: 'Show all' }).click()
  await page.getByRole('button', { name: `Trace ${traces[1]}` }).waitFor()
  t.pass('Show all lists every request again')
  await page.close()
})
