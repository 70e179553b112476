/**
 * The management console in a real browser: sign-in through the token link, collections
 * and proxies made in the UI, live updates from another client (list, Reload banner,
 * remote delete), roles, sign-out, expiry and a refused link's reason.
 */
import t from 'tap'
import { cspViolations, launchBrowser, screenshot, signedIn, startService, tokenCli, type PageStorage } from '../helpers/browser.js'
import { createTempDir } from '../helpers/db.js'

// Read inside page.evaluate, in the browser.
declare const sessionStorage: PageStorage
declare const localStorage: PageStorage

t.test('console', async t => {
  const svc = await startService(t)
  const browser = await launchBrowser(t)

  await t.test('the token link signs in, and the token leaves the address bar', async t => {
    const url = tokenCli(svc.dataDir, new URL(svc.console).port, ['--sub', 'alice', '--role', 'admin', '--url'])
    t.match(url, new RegExp(`^${svc.console}/#access_token=ey`))
    const page = await browser.newPage()
    await page.goto(url)
    await page.getByText('alice').waitFor()
    t.equal(new URL(page.url()).hash, '', 'fragment removed')
    t.equal(await page.evaluate(() => sessionStorage.getItem('gatehouse.console.token')?.startsWith('ey')), true, 'kept for the tab')
    t.equal(await page.evaluate(() => localStorage.length), 0, 'nothing outlives the tab')
    await page.getByRole('heading', { name: 'Collections' }).waitFor()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You signed out.').waitFor()
    t.equal(await page.evaluate(() => sessionStorage.getItem('gatehouse.console.token')), null)
    await page.close()
  })

  await t.test('an expired token gives a clear sign-in screen', async t => {
    const url = tokenCli(svc.dataDir, new URL(svc.console).port, ['--sub', 'bob', '--role', 'viewer', '--ttl', '2', '--url'])
    const page = await browser.newPage()
    await page.goto(url)
    await page.getByText('Your session has expired').waitFor({ timeout: 60_000 })
    t.ok(await page.getByText('--url').isVisible(), 'says how to get a new link')
    await page.close()
  })

  await t.test('a link signed with another DATA_DIR\'s key shows the API\'s reason on the sign-in card', async t => {
    const elsewhere = await createTempDir(t)
    const url = tokenCli(elsewhere, new URL(svc.console).port, ['--sub', 'carol', '--role', 'admin', '--url'])
    const page = await browser.newPage()
    await page.goto(url)
    const reason = page.getByRole('status').filter({ hasText: 'The server refused this sign-in' })
    await reason.waitFor()
    t.match(await reason.textContent(), /signed by a key this service does not know: the token command must run with the same DATA_DIR as this server/)
    t.ok(await page.getByText('--url').isVisible(), 'beside how to get a link')
    t.equal(await page.evaluate(() => sessionStorage.getItem('gatehouse.console.token')), null, 'the refused token is not kept')
    await page.close()
  })

  await t.test('create a collection and a proxy, publish it', async t => {
    const page = await signedIn(browser, svc, 'admin', 'alice')
    await page.getByRole('button', { name: 'New collection' }).click()
    const dialog = page.getByRole('dialog', { name: 'New collection' })
    await dialog.getByLabel('Name').fill('billing')
    await dialog.getByLabel('Base path').fill('/billing')
    await dialog.getByLabel('Upstream URL').fill('http://127.0.0.1:9')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: /billing/ }).waitFor()
    await page.getByRole('button', { name: 'New proxy' }).click()
    const pd = page.getByRole('dialog', { name: 'New proxy' })
    await pd.getByLabel('Name', { exact: true }).fill('invoice')
    await pd.getByLabel(/^Path/).fill('/invoices/{id}')
    t.equal(await pd.getByLabel(/Add parameter defaults to the forwarded query/).isChecked(), false, 'parameter defaults are not added unless asked for')
    await pd.getByLabel(/Add parameter defaults to the forwarded query/).check()
    await pd.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('cell', { name: 'draft' }).waitFor()
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByRole('cell', { name: 'published' }).waitFor()
    const listed = await svc.call('GET', '/proxies')
    t.match(listed.body.items, [{ name: 'invoice', path: '/invoices/{id}', status: 'published', apply_parameter_defaults: true }])
    await screenshot(page, 'collection')

    // Bulk: a second proxy (made elsewhere, shown live), both selected and published, then deleted.
    const billing = listed.body.items[0].collection_id
    await svc.call('POST', '/proxies', { collection_id: billing, name: 'refund', methods: ['POST'], path: '/refunds' })
    await page.getByRole('button', { name: 'refund' }).waitFor({ timeout: 60_000 })
    await page.getByLabel('Select all').check()
    await page.getByLabel('Bulk actions').getByRole('button', { name: 'Publish', exact: true }).click()
    await page.getByRole('cell', { name: 'draft' }).waitFor({ state: 'detached' })
    t.same((await svc.call('GET', `/proxies?collection_id=${billing}`)).body.items.map((p: { status: string }) => p.status), ['published', 'published'])

    // Export downloads the collection file; Duplicate opens the copy.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()])
    t.equal(download.suggestedFilename(), 'billing.gatehouse.json')
    await page.getByRole('button', { name: 'Duplicate', exact: true }).first().click()
    await page.getByRole('heading', { name: /billing \(copy\)/ }).waitFor()
    t.equal(await page.getByRole('cell', { name: 'draft' }).count(), 2, "the copy's proxies are drafts")

    page.on('dialog', d => { void d.accept() })
    await page.getByLabel('Select all').check()
    await page.getByLabel('Bulk actions').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByText('No proxies in this collection yet.').waitFor()
    await page.close()
  })

  await t.test("another client's change appears in an open list", async t => {
    const page = await signedIn(browser, svc, 'viewer')
    await page.getByText('● Live').waitFor()
    const created = await svc.call('POST', '/collections', { name: 'made elsewhere', base_path: '/elsewhere', upstream_url: 'http://127.0.0.1:9' })
    t.equal(created.status, 201)
    await page.getByRole('link', { name: 'made elsewhere' }).waitFor({ timeout: 60_000 })
    await svc.call('DELETE', `/collections/${created.body.id}`)
    await page.getByRole('link', { name: 'made elsewhere' }).waitFor({ state: 'detached', timeout: 60_000 })
    await screenshot(page, 'collections')
    await page.close()
  })

  await t.test('a remote update raises the Reload banner, a remote delete closes the dialog', async t => {
    const coll = await svc.call('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: 'http://127.0.0.1:9' })
    const proxy = await svc.call('POST', '/proxies', { collection_id: coll.body.id, name: 'cart', methods: ['GET'], path: '/cart' })
    const page = await signedIn(browser, svc, 'editor')
    await page.goto(`${svc.console}/collections/${coll.body.id}`)
    await page.getByText('● Live').waitFor()
    await page.getByRole('button', { name: 'cart' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('heading', { name: 'Edit cart' }).waitFor()
    await dialog.getByRole('textbox', { name: /^Description/ }).fill('my unsaved words')
    await svc.call('PUT', `/proxies/${proxy.body.id}`, { name: 'basket' })
    await dialog.getByText('This proxy was changed elsewhere.').waitFor({ timeout: 60_000 })
    t.equal(await dialog.getByRole('textbox', { name: /^Description/ }).inputValue(), 'my unsaved words', 'edits are kept until Reload')
    await screenshot(page, 'reload-banner')
    await dialog.getByRole('button', { name: 'Reload' }).click()
    await dialog.getByRole('heading', { name: 'Edit basket' }).waitFor()
    t.equal(await dialog.getByLabel('Name', { exact: true }).inputValue(), 'basket', 'Reload shows the new version')
    await svc.call('DELETE', `/proxies/${proxy.body.id}`)
    await dialog.waitFor({ state: 'detached', timeout: 60_000 })
    await page.getByText('was deleted elsewhere').waitFor()
    t.equal(await page.getByRole('button', { name: 'basket' }).count(), 0, 'the list refreshed')
    await page.close()
  })

  await t.test('a viewer sees no edit controls', async t => {
    const coll = await svc.call('POST', '/collections', { name: 'readonly', base_path: '/ro', upstream_url: 'http://127.0.0.1:9' })
    const proxy = await svc.call('POST', '/proxies', { collection_id: coll.body.id, name: 'thing', methods: ['GET'], path: '/thing', status: 'published' })
    await svc.call('POST', '/proxies', { collection_id: coll.body.id, name: 'unfinished', methods: ['GET'], path: '/unfinished' })
    const page = await signedIn(browser, svc, 'viewer')
    await page.getByRole('link', { name: 'readonly' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'New collection' }).count(), 0)
    t.equal(await page.getByRole('button', { name: 'Import' }).count(), 0)
    await page.getByRole('link', { name: 'readonly' }).click()
    await page.getByRole('cell', { name: 'thing', exact: true }).waitFor()
    t.equal(await page.getByRole('cell', { name: 'unfinished', exact: true }).count(), 0, 'a viewer does not see drafts')
    for (const name of ['New proxy', 'Edit', 'Delete', 'Duplicate', 'Publish', 'Disable']) t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`)
    await page.goto(`${svc.console}/proxies/${proxy.body.id}/workflow`)
    await page.getByRole('tab', { name: 'versions' }).waitFor()
    for (const name of ['Save', 'Run', 'Enable']) t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name} in the builder`)
    await page.goto(`${svc.console}/policies`)
    await page.getByRole('heading', { name: 'Policies' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'New' }).count(), 0)
    await page.close()
  })
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
