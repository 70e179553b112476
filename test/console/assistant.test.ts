/**
 * The console's assistant panel in a real browser, against a scripted OpenAI-compatible model:
 * a message, a change shown for approval, approved, and the result visible in the console.
 */
import t from 'tap'
import { cspViolations, launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'
import { scriptedModel } from '../helpers/model.js'

t.test('the assistant panel chats and asks before changing', async t => {
  const model = await scriptedModel(t)
  const svc = await startService(t, { ASSISTANT_BASE_URL: model.url, ASSISTANT_MODEL: 'scripted-1' })
  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'editor', 'eve')
  model.script.push(
    { tool_calls: [{ name: 'list_collections', arguments: {} }] },
    { content: 'There is none yet; I will create it.', tool_calls: [{ name: 'create_collection', arguments: { name: 'weather', base_path: '/weather', upstream_url: 'http://127.0.0.1:9' } }] },
    { content: 'Created weather at /weather.' }
  )
  await page.getByRole('button', { name: 'Assistant', exact: true }).click()
  const panel = page.getByRole('complementary', { name: 'Assistant' })
  await panel.getByLabel('Message').fill('Create a weather API')
  await panel.getByRole('button', { name: 'Send' }).click()
  const confirm = panel.getByRole('alertdialog', { name: 'Confirm action' })
  await confirm.waitFor()
  t.match(await confirm.textContent(), /create_collection[\s\S]*"base_path": "\/weather"/)
  t.equal((await svc.call('GET', '/collections')).body.items.length, 0, 'nothing changed before approval')
  await screenshot(page, 'assistant')
  await confirm.getByRole('button', { name: 'Approve' }).click()
  await panel.getByText('Created weather at /weather.').waitFor()
  t.match((await svc.call('GET', '/collections')).body.items, [{ name: 'weather', base_path: '/weather' }])
  await page.getByRole('cell', { name: 'weather', exact: true }).waitFor({ timeout: 60_000 })
  t.pass('the collections list shows it live')
})

t.test('without a model the panel says what to set', async t => {
  const svc = await startService(t)
  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'viewer', 'vic')
  await page.getByRole('button', { name: 'Assistant', exact: true }).click()
  await page.getByRole('complementary', { name: 'Assistant' }).getByText(/ASSISTANT_BASE_URL/).waitFor()
  t.pass()
})

t.test('the portal assistant calls an API with the developer credentials', async t => {
  const model = await scriptedModel(t)
  const backend = await startBackend(t, (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ forecast: 'sunny', path: req.url })) })
  const svc = await startService(t, { ASSISTANT_BASE_URL: model.url, ASSISTANT_MODEL: 'scripted-1' })
  const c = (await svc.call('POST', '/collections', { name: 'weather', base_path: '/weather', upstream_url: backend.url, auth_required: true })).body
  const p = (await svc.call('POST', '/proxies', { collection_id: c.id, name: 'today', methods: ['GET'], path: '/today', status: 'published' })).body
  const cl = (await svc.call('POST', '/clients', { name: 'dev' })).body
  const prof = (await svc.call('POST', `/clients/${cl.id}/profiles`, { name: 'dev', auth_type: 'api_key', collection_ids: [c.id] })).body
  model.script.push({ tool_calls: [{ name: 'execute_endpoint', arguments: { endpoint_id: p.id } }] }, { content: 'It is sunny today.' })

  const browser = await launchBrowser(t)
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  await page.goto(`${svc.gateway}/portal/`)
  await page.getByLabel('Client id').fill(cl.id)
  await page.getByLabel('Profile id').fill(prof.id)
  await page.getByLabel('API key or token').fill(prof.credentials.api_key)
  await page.getByRole('button', { name: 'Use' }).click()
  const panel = page.getByRole('region', { name: 'Assistant' })
  await panel.getByLabel('Message to the assistant').fill('What is the weather today?')
  await panel.getByRole('button', { name: 'Ask' }).click()
  await panel.getByText('It is sunny today.').waitFor()
  t.match(backend.seen, [{ method: 'GET', url: '/today' }], 'the call reached the backend with the developer profile')
  t.ok(await panel.getByText('✓ execute_endpoint').isVisible())
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
