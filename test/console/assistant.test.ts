/**
 * The console's assistant panel in a real browser, against a scripted OpenAI-compatible model:
 * a message, a change shown for approval, approved, and the result visible in the console.
 */
import t from 'tap'
import { launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
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
  await page.getByRole('cell', { name: 'weather', exact: true }).waitFor({ timeout: 5000 })
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
