/**
 * The workflow builder in a real browser: trigger → request → condition → two responses,
 * built by dragging from the catalogue and wiring handles, saved (the server's validation
 * message shown on the node it names), run with each node's output shown.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { cspViolations, launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'

async function connect (page: Page, from: string, to: string, handle?: string): Promise<void> {
  const source = page.locator(`[data-testid="node-${from}"]`).locator('..').locator(handle === undefined ? '.react-flow__handle.source' : `.react-flow__handle.source[data-handleid="${handle}"]`)
  const target = page.locator(`[data-testid="node-${to}"]`).locator('..').locator('.react-flow__handle.target')
  const a = (await source.boundingBox())!
  const b = (await target.boundingBox())!
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2)
  await page.mouse.down()
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 })
  await page.mouse.up()
}

async function settings (page: Page, node: string, values: Record<string, string>): Promise<void> {
  await page.locator(`[data-testid="node-${node}"]`).click()
  const panel = page.locator('.panel')
  await panel.getByLabel('Node name').waitFor()
  for (const [name, value] of Object.entries(values)) {
    const field = panel.getByLabel(name, { exact: true })
    if (await field.evaluate(el => el.tagName) === 'SELECT') await field.selectOption(value)
    else await field.fill(value)
  }
}

t.test('build, save, validate and run a workflow by dragging', async t => {
  const backend = await startBackend(t, (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"stock": 7}') })
  const svc = await startService(t)
  const browser = await launchBrowser(t)
  const coll = await svc.call('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  const proxy = await svc.call('POST', '/proxies', { collection_id: coll.body.id, name: 'stock', methods: ['GET'], path: '/stock', status: 'published' })
  const page = await signedIn(browser, svc, 'editor')
  await page.goto(`${svc.console}/proxies/${proxy.body.id}/workflow`)
  await page.getByRole('tab', { name: 'versions' }).waitFor()

  const canvas = page.locator('.canvas')
  const drop = async (type: string, x: number, y: number) => {
    await page.locator(`.palette-item[data-type="${type}"]`).dragTo(canvas, { targetPosition: { x, y } })
  }
  await drop('http_trigger', 40, 220)
  await drop('http_request_node', 260, 220)
  await drop('condition_node', 480, 220)
  await drop('response_node', 720, 90)
  await drop('response_node', 720, 380)
  for (const name of ['trigger', 'http_request', 'condition', 'response', 'response_2']) await page.locator(`[data-testid="node-${name}"]`).waitFor()

  await connect(page, 'trigger', 'http_request')
  await connect(page, 'http_request', 'condition')
  await connect(page, 'condition', 'response', 'true')
  await connect(page, 'condition', 'response_2', 'false')
  t.equal(await page.locator('.react-flow__edge').count(), 4, 'four edges drawn')

  // Handles follow the catalogue: nothing enters the entry trigger, nothing leaves a response.
  t.equal(await page.locator('[data-testid="node-trigger"]').locator('..').locator('.react-flow__handle.target').count(), 0)
  t.equal(await page.locator('[data-testid="node-response"]').locator('..').locator('.react-flow__handle.source').count(), 0)

  await settings(page, 'condition', { conditions: '[{"left": "{{http_request.response.status}}", "operator": "equals", "right": 200}]' })
  await settings(page, 'response', { status: '200', body: '{"in_stock": "{{http_request.response.body.stock}}"}' })
  await settings(page, 'response_2', { status: '502', body: '{"error": "backend said no"}' })

  // Saved without the request's URL: the server's message appears on that node.
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  const problem = page.locator('[data-testid="node-http_request"] .wf-problem')
  await problem.first().waitFor()
  t.match(await problem.first().textContent(), /url/i, 'the validation message names the missing setting')
  t.equal(await page.locator('[data-testid="node-condition"] .wf-problem').count(), 0, 'other nodes carry no message')
  await screenshot(page, 'workflow-validation')

  await settings(page, 'http_request', { method: 'GET', url: `${backend.url}/stock` })
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByText(/Saved as version 2\./).waitFor()
  t.equal(await page.locator('.wf-problem').count(), 0, 'no problems left')

  await page.getByRole('button', { name: 'Run', exact: true }).click()
  await page.getByLabel('Workflow response').waitFor()
  for (const name of ['trigger', 'http_request', 'condition', 'response']) {
    const out = page.getByLabel(`Output of ${name}`).first()
    t.match(await out.textContent(), /success/, `${name} ran and shows its output`)
  }
  await page.locator('[data-testid="node-http_request"]').click()
  t.match(await page.locator('.panel').getByLabel('Output of http_request').textContent(), /"stock": 7/, 'the request node shows the backend answer')
  t.match(await page.locator('.panel [data-testid="status-rule"]').textContent(), /a non-2xx answer is handled by condition 'condition'/, 'the panel says, from validation, which rule handles a non-2xx answer')
  await page.getByRole('tab', { name: 'run' }).click()
  t.equal(await page.getByLabel('Output of response_2').count(), 0, 'the false branch did not run')
  t.match(await page.getByLabel('Workflow response').textContent(), /"in_stock": 7/)
  await screenshot(page, 'workflow')

  // Enabled, the gateway answers from the workflow.
  await page.getByRole('button', { name: 'Enable', exact: true }).click()
  await page.getByRole('button', { name: 'Disable', exact: true }).waitFor()
  const res = await fetch(`${svc.gateway}/shop/stock`, { headers: { connection: 'close' } })
  t.same(await res.json(), { in_stock: 7 })

  // The saved graph comes back as drawn.
  const saved = await svc.call('GET', `/proxies/${proxy.body.id}/workflow`)
  t.same(saved.body.workflow.edges.map((e: any) => [e.source, e.target, e.sourceHandle ?? null]).sort(), [
    ['condition', 'response', 'true'], ['condition', 'response_2', 'false'], ['http_request', 'condition', null], ['trigger', 'http_request', null]
  ])

  // Saved elsewhere with nothing unsaved here: the graph reloads.
  const remote = saved.body.workflow
  remote.nodes.find((n: any) => n.id === 'response_2').name = 'sorry'
  t.equal((await svc.call('PUT', `/proxies/${proxy.body.id}/workflow`, { workflow: remote }, 'editor')).status, 200)
  await page.locator('[data-testid="node-sorry"]').waitFor({ timeout: 10_000 })
  // Saved elsewhere while this tab has unsaved edits: a banner, and the edits stay.
  await page.locator('[data-testid="node-trigger"]').click()
  await page.getByLabel('Node name').fill('entry')
  remote.nodes.find((n: any) => n.id === 'response').name = 'fine'
  t.equal((await svc.call('PUT', `/proxies/${proxy.body.id}/workflow`, { workflow: remote }, 'editor')).status, 200)
  await page.getByText('This workflow was saved elsewhere while you have unsaved edits.').waitFor({ timeout: 10_000 })
  t.equal(await page.locator('[data-testid="node-entry"]').count(), 1, 'the unsaved edit is still on screen')
  await page.getByRole('button', { name: 'Load the saved workflow' }).click()
  await page.locator('[data-testid="node-fine"]').waitFor()
  t.equal(await page.locator('[data-testid="node-entry"]').count(), 0, 'loading the saved workflow discards the edit')
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
