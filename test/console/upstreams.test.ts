/**
 * The console's collection page in real Chromium: its targets with this instance's health (a
 * dead target shown ejected after gateway traffic), and the targets edited in the dialog.
 */
import t from 'tap'
import { launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
import { startBackend } from '../helpers/backends.js'

t.test('targets and their health on the collection page; targets edited there', async t => {
  const live = await startBackend(t, '127.0.0.2', 'live')
  const dead = 'http://127.0.0.3:9'
  const svc = await startService(t)
  const coll = (await svc.call('POST', '/collections', {
    name: 'orders', base_path: '/orders', auth_required: false,
    upstream: { targets: [{ url: live.url, weight: 300 }, { url: dead }], health_checks: { passive: { consecutive_failures: 1, ejection_ms: 600_000, max_ejection_percent: 50 } } }
  })).body
  await svc.call('POST', '/proxies', { collection_id: coll.id, name: 'list', methods: ['GET'], path: '/list', status: 'published' })
  await svc.service.reloadRoutes()
  for (let i = 0; i < 8; i++) t.equal((await fetch(`${svc.gateway}/orders/list`)).status, 200, 'served by the live target')

  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'editor', 'erin')
  await page.goto(`${svc.console}/collections/${coll.id}`)
  const targets = page.getByRole('table', { name: 'Targets' })
  await targets.getByRole('row').filter({ hasText: dead }).getByText('ejected').waitFor()
  t.ok(await targets.getByRole('row').filter({ hasText: live.url }).getByText('healthy').isVisible(), 'the live target is healthy')
  t.match(await targets.getByRole('row').filter({ hasText: dead }).textContent(), /ECONNREFUSED/, 'with the reason')
  await screenshot(page, 'collection-targets')

  await page.getByRole('button', { name: 'Edit targets' }).click()
  const dialog = page.getByRole('dialog', { name: 'Targets of orders' })
  await dialog.getByLabel('Targets').fill(`${live.url} 50\nhttp://127.0.0.4:8080`)
  await dialog.getByLabel('Balancing').selectOption('least_connections')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await targets.getByRole('row').filter({ hasText: 'http://127.0.0.4:8080' }).waitFor()
  t.equal(await targets.getByRole('row').filter({ hasText: dead }).count(), 0, 'the dead target is gone from the page')
  const saved = (await svc.call('GET', `/collections/${coll.id}`)).body
  t.same(saved.upstream.targets, [{ url: live.url, weight: 50 }, { url: 'http://127.0.0.4:8080', weight: 100 }])
  t.equal(saved.upstream.balancing, 'least_connections')
  t.equal(saved.upstream.health_checks.passive.consecutive_failures, 1, 'the other settings stay')

  // A bad line is refused with the API's reason, and nothing changes.
  await page.getByRole('button', { name: 'Edit targets' }).click()
  await dialog.getByLabel('Targets').fill('ftp://nope')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await dialog.getByText(/must be an absolute http/).waitFor()
  t.equal((await svc.call('GET', `/collections/${coll.id}`)).body.upstream.targets.length, 2)
})
