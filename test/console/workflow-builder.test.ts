/**
 * The workflow builder in a real browser: trigger → request → condition → two responses,
 * built by dragging from the catalogue and wiring handles, saved (the server's validation
 * message shown on the node it names), run with each node's output shown; reached from the
 * proxy list's "Add workflow" link, run with a sample request kept per proxy, and nodes another
 * client adds placed in view.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { cspViolations, launchBrowser, screenshot, signedIn, startService, type PageElement } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'
import { eventually } from '../helpers/wait.js'

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
    if (await field.evaluate(el => (el as unknown as PageElement).tagName) === 'SELECT') await field.selectOption(value)
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
  await page.locator('[data-testid="node-sorry"]').waitFor({ timeout: 60_000 })
  // Saved elsewhere while this tab has unsaved edits: a banner, and the edits stay.
  await page.locator('[data-testid="node-trigger"]').click()
  await page.getByLabel('Node name').fill('entry')
  remote.nodes.find((n: any) => n.id === 'response').name = 'fine'
  t.equal((await svc.call('PUT', `/proxies/${proxy.body.id}/workflow`, { workflow: remote }, 'editor')).status, 200)
  await page.getByText('This workflow was saved elsewhere while you have unsaved edits.').waitFor({ timeout: 60_000 })
  t.equal(await page.locator('[data-testid="node-entry"]').count(), 1, 'the unsaved edit is still on screen')
  await page.getByRole('button', { name: 'Load the saved workflow' }).click()
  await page.locator('[data-testid="node-fine"]').waitFor()
  t.equal(await page.locator('[data-testid="node-entry"]').count(), 0, 'loading the saved workflow discards the edit')
})

t.test('the list names the way in; Run sends a sample request kept per proxy; a node another client adds lands in view', async t => {
  const svc = await startService(t)
  const browser = await launchBrowser(t)
  const coll = await svc.call('POST', '/collections', { name: 'weather', base_path: '/weather', upstream_url: 'http://127.0.0.1:9', auth_required: false })
  const proxy = await svc.call('POST', '/proxies', {
    collection_id: coll.body.id, name: 'forecast', methods: ['GET', 'POST'], path: '/forecast/{city}', status: 'published',
    parameters: [{ name: 'city', location: 'path', type: 'string', required: true, default: 'Paris' }, { name: 'days', location: 'query', type: 'integer', required: false, default: 3 }]
  })
  const page = await signedIn(browser, svc, 'editor')
  await page.goto(`${svc.console}/collections/${coll.body.id as string}`)
  await page.getByRole('link', { name: 'Add workflow' }).click()
  await page.getByRole('tab', { name: 'versions' }).waitFor()

  const canvas = page.locator('.canvas')
  await page.locator('.palette-item[data-type="http_trigger"]').dragTo(canvas, { targetPosition: { x: 60, y: 200 } })
  await page.locator('.palette-item[data-type="response_node"]').dragTo(canvas, { targetPosition: { x: 360, y: 200 } })
  await connect(page, 'trigger', 'response')
  await settings(page, 'response', { status: '200', body: '{"city": "{{trigger.params.city}}", "days": "{{trigger.request.query.days}}", "n": "{{trigger.request.body.n}}", "method": "{{trigger.request.method}}"}' })

  // The run tab's sample request starts from the proxy: its path parameter and the parameters' defaults.
  await page.getByRole('tab', { name: 'run' }).click()
  const form = page.getByRole('group', { name: 'Sample request' })
  t.equal(await form.getByLabel('Path parameter city').inputValue(), 'Paris', 'the path parameter, from its default')
  t.equal(await form.getByLabel('Query').inputValue(), 'days=3', 'the query parameter with a default')
  await form.getByLabel('Method').selectOption('POST')
  await form.getByLabel('Path parameter city').fill('Lyon')
  await form.getByLabel('Headers').fill('X-User: ada')
  await form.getByLabel('Body').fill('{"n": 2}')
  await page.getByRole('button', { name: 'Run', exact: true }).click()
  const response = page.getByLabel('Workflow response')
  await response.waitFor()
  t.match(await response.textContent(), /"city": "Lyon"[\s\S]*"days": "3"[\s\S]*"n": 2[\s\S]*"method": "POST"/, '{{trigger.params.city}} and the rest come from the sample request')
  await page.locator('[data-testid="node-trigger"]').click()
  t.match(await page.locator('.panel').getByLabel('Output of trigger').textContent(), /"x-user": "ada"/, 'the headers reach the trigger')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await page.getByText(/Saved as version 1\./).waitFor()

  // Kept per proxy: a new visit starts from the last request.
  await page.reload()
  await page.getByRole('tab', { name: 'run' }).click()
  t.equal(await page.getByRole('group', { name: 'Sample request' }).getByLabel('Path parameter city').inputValue(), 'Lyon')
  t.equal(await page.getByRole('group', { name: 'Sample request' }).getByLabel('Method').inputValue(), 'POST')

  // Another client adds two nodes: one with no position, one placed far to the right. Both end up on the visible canvas.
  const saved = (await svc.call('GET', `/proxies/${proxy.body.id as string}/workflow`)).body.workflow
  saved.nodes.push({ id: 'note', name: 'note', type: 'set_node', settings: { values: { a: 1 } } })
  saved.nodes.push({ id: 'far', name: 'far', type: 'set_node', settings: { values: { b: 2 } }, position: { x: 4000, y: 2500 } })
  t.equal((await svc.call('PUT', `/proxies/${proxy.body.id as string}/workflow`, { workflow: saved }, 'editor')).status, 200)
  const box = (await canvas.boundingBox())!
  for (const id of ['note', 'far']) {
    const node = page.locator(`[data-testid="node-${id}"]`)
    await node.waitFor()
    const inside = async () => {
      const b = await node.boundingBox()
      return b !== null && b.x >= box.x && b.y >= box.y && b.x + b.width <= box.x + box.width && b.y + b.height <= box.y + box.height
    }
    t.ok(await eventually(inside), `node ${id} is inside the visible canvas (${JSON.stringify(await node.boundingBox())} in ${JSON.stringify(box)})`)
  }
  await screenshot(page, 'workflow-sample-request')

  await page.goto(`${svc.console}/collections/${coll.body.id as string}`)
  await page.getByRole('link', { name: 'Edit workflow (disabled)' }).waitFor()
  t.pass('the list now offers to edit the saved, disabled workflow')
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
