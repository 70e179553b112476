/**
 * From the console to the developer portal in a real browser: a collection and proxy
 * made and published in the console, a client and api_key profile made there (the key
 * shown once), then the portal on the gateway listener lists the published proxy (never
 * the draft) and calls it for real through "try it" with the profile's credentials.
 */
import t from 'tap'
import { createCollectionInConsole, cspViolations, launchBrowser, screenshot, signedIn, startService, type PageStorage } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'

// Read inside page.evaluate, in the browser.
declare const sessionStorage: PageStorage

t.test('publish in the console, find and call it in the portal', async t => {
  const backend = await startBackend(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order: req.url, auth_forwarded: req.headers.authorization !== undefined }))
  })
  const svc = await startService(t)
  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'admin', 'alice')

  await createCollectionInConsole(page, 'orders', backend.url)
  let dialog = page.getByRole('dialog')
  const newProxy = async (name: string, path: string, status: string, parameters = '') => {
    await page.getByRole('button', { name: 'New proxy' }).click()
    dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name', { exact: true }).fill(name)
    await dialog.getByRole('textbox', { name: /^Description/ }).fill(`The ${name} endpoint.`)
    await dialog.getByLabel(/^Path/).fill(path)
    await dialog.getByRole('textbox', { name: /^Parameters/ }).fill(parameters)
    await dialog.getByLabel('Status').selectOption(status)
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('button', { name, exact: true }).waitFor()
  }
  await newProxy('order', '/{id}', 'published', '[{"name": "id", "location": "path", "type": "string", "required": true, "default": "42", "description": "Order number"}]')
  await newProxy('secret draft', '/drafts', 'draft')
  const collectionId = (await svc.call('GET', '/collections')).body.items[0].id

  // A client and an api_key profile allowed to call the collection: the key is shown once.
  await page.getByRole('link', { name: 'Clients' }).click()
  await page.getByRole('button', { name: 'New' }).click()
  dialog = page.getByRole('dialog')
  await dialog.getByLabel('Name').fill('acme')
  await dialog.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('link', { name: 'acme' }).click()
  await page.getByRole('heading', { name: 'Profiles of acme' }).waitFor()
  await page.getByRole('button', { name: 'New' }).click()
  dialog = page.getByRole('dialog')
  await dialog.getByLabel('Name').fill('prod')
  await dialog.getByRole('textbox', { name: /^Collections/ }).fill(JSON.stringify([collectionId]))
  await dialog.getByRole('button', { name: 'Create' }).click()
  const shownOnce = page.getByLabel('New credentials')
  await shownOnce.waitFor()
  const apiKey = JSON.parse(await shownOnce.textContent() ?? '{}').api_key as string
  t.match(apiKey, /^gh_/, 'the new api key is shown to the admin')
  await screenshot(page, 'profiles')
  const client = (await svc.call('GET', '/clients')).body.items[0]
  const profile = (await svc.call('GET', `/clients/${client.id}/profiles`)).body.items[0]

  const portal = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  await portal.goto(`${svc.gateway}/portal/`)
  const section = portal.getByRole('region', { name: 'orders' })
  await section.getByRole('button', { name: /order/ }).waitFor()
  t.equal(await portal.getByText('secret draft').count(), 0, 'drafts are never shown')
  await portal.getByLabel('Client id').fill(client.id)
  await portal.getByLabel('Profile id').fill(profile.id)
  await portal.getByLabel('API key or token').fill(apiKey)
  await portal.getByRole('button', { name: 'Use' }).click()
  await section.getByRole('button', { name: /order/ }).click()
  const tryIt = portal.getByRole('form', { name: 'Try order' })
  t.equal(await tryIt.getByLabel('id', { exact: true }).inputValue(), '42', 'pre-filled from the parameter default')
  await tryIt.getByLabel('id', { exact: true }).fill('A-7')
  await tryIt.getByRole('button', { name: 'Send' }).click()
  const body = tryIt.getByLabel('Response body')
  await body.waitFor()
  t.same(JSON.parse(await body.textContent() ?? ''), { order: '/A-7', auth_forwarded: false }, 'a real call through the gateway with the profile credentials')
  t.match(await tryIt.getByLabel('Response', { exact: true }).textContent(), /200/)
  await screenshot(portal, 'portal')
  t.equal(await portal.evaluate(() => JSON.parse(sessionStorage.getItem('gatehouse.portal.credentials') ?? '{}').token), apiKey, 'credentials kept for the tab')

  // Without credentials the gateway refuses, and the portal shows it as it is.
  await portal.getByLabel('API key or token').fill('')
  await portal.getByRole('button', { name: 'Use' }).click()
  await tryIt.getByRole('button', { name: 'Send' }).click()
  await tryIt.getByText('401').waitFor()

  // The collection's OpenAPI document: published proxies only.
  const href = await section.getByRole('link', { name: 'OpenAPI document' }).getAttribute('href')
  const doc = await (await fetch(`${svc.gateway}${href}`, { headers: { connection: 'close' } })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(doc.paths), ['/{id}'])

  // Unpublished in the console: gone from the portal on its next load.
  await svc.call('POST', '/proxies/bulk', { action: 'unpublish', ids: (await svc.call('GET', '/proxies')).body.items.map((p: { id: string }) => p.id) })
  await portal.reload()
  await portal.getByText('No APIs are published yet.').waitFor()
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
