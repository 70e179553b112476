/**
 * CORS in real Chromium: a collection given allowed origins in the console form, then a page on
 * another origin (127.0.0.2) calls its authenticated proxy on the gateway (127.0.0.1) with
 * credentials. The allowed origin reads the answer; a page on a disallowed origin is blocked by
 * the browser; the preflights never reach the backend.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createCollectionInConsole, launchBrowser, screenshot, signedIn, startService } from '../helpers/browser.js'
import { startBackend } from '../helpers/gateway.js'

async function pageServer (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const server = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app</p>') })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.2', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return `http://127.0.0.2:${(server.address() as AddressInfo).port}`
}

t.test('a page on another origin calls an authenticated proxy; a disallowed origin is blocked', async t => {
  const backend = await startBackend(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-total': '3' }).end(JSON.stringify({ orders: [1, 2, 3], url: req.url }))
  })
  const svc = await startService(t)
  const [allowed, other] = [await pageServer(t), await pageServer(t)]
  const browser = await launchBrowser(t)
  const page = await signedIn(browser, svc, 'admin', 'alice')

  await createCollectionInConsole(page, 'shop', backend.url, async dialog => {
    await dialog.getByLabel('Allowed origins').fill(`${allowed}, https://*.example.org`)
    await dialog.getByLabel('Allowed request headers').fill('authorization, x-client-id, x-profile-id')
    await dialog.getByLabel('Exposed response headers').fill('x-total')
    await dialog.getByLabel('Preflight max age (seconds)').fill('0')
    await dialog.getByLabel(/Allow credentials/).check()
    await screenshot(page, 'collection-cors')
  })

  const coll = (await svc.call('GET', '/collections')).body.items[0]
  t.same(coll.cors, {
    allow_origins: [allowed, 'https://*.example.org'], allow_methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allow_headers: ['authorization', 'x-client-id', 'x-profile-id'], expose_headers: ['x-total'], allow_credentials: true, max_age_s: 0
  }, 'the console saved the CORS settings')
  t.equal((await svc.call('PUT', `/collections/${coll.id}`, { cors: { allow_origins: ['ftp://x'] } })).status, 400, 'an origin that is not one is refused')
  // The proxy from the console's form, with a response cache and compression off.
  await page.getByRole('button', { name: 'New proxy' }).click()
  const form = page.getByRole('dialog')
  await form.getByLabel('Name', { exact: true }).fill('orders')
  await form.getByLabel(/^Path/).fill('/orders')
  await form.getByLabel('Status').selectOption('published')
  await form.getByLabel('Cache answers for (seconds)').fill('60')
  await form.getByLabel('Cache varies by request headers').fill('x-tenant')
  await form.getByLabel(/Compress answers/).uncheck()
  await screenshot(page, 'proxy-cache')
  await form.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('button', { name: 'orders', exact: true }).waitFor()
  const made = (await svc.call('GET', `/proxies?collection_id=${coll.id as string}`)).body.items[0]
  t.same({ cache: made.cache, compression: made.compression }, { cache: { ttl_s: 60, vary: ['x-tenant'], shared: false }, compression: false }, 'the console saved the cache and compression settings')
  const client = (await svc.call('POST', '/clients', { name: 'acme' })).body
  const profile = (await svc.call('POST', `/clients/${client.id}/profiles`, { name: 'web', auth_type: 'api_key', collection_ids: [coll.id] })).body
  const headers = { authorization: `Bearer ${profile.credentials.api_key as string}`, 'x-client-id': client.id, 'x-profile-id': profile.id }

  const app = await browser.newPage()
  const callFrom = async (origin: string) => {
    await app.goto(origin)
    return await app.evaluate(async ({ url, headers }) => {
      try {
        const r = await fetch(url, { credentials: 'include', headers })
        return { status: r.status, body: await r.json(), total: r.headers.get('x-total') }
      } catch (err) { return { blocked: String(err) } }
    }, { url: `${svc.gateway}/shop/orders?page=1`, headers })
  }
  const ok = await callFrom(allowed)
  t.same(ok, { status: 200, body: { orders: [1, 2, 3], url: '/orders?page=1' }, total: '3' }, 'the allowed origin reads the answer and the exposed header')
  const blocked = await callFrom(other)
  t.match(blocked, { blocked: /TypeError|Failed to fetch/ }, 'the browser blocks a disallowed origin')
  t.equal(backend.seen.filter(s => s.method === 'OPTIONS').length, 0, 'no preflight reached the backend')
  t.equal(backend.seen.length, 1, 'only the allowed call reached the backend (the blocked one stopped at its preflight)')
  const again = await callFrom(allowed)
  t.same(again, ok, 'served again, from the cache')
  t.equal(backend.seen.length, 1, 'without a backend call')
})
