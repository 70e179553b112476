/**
 * The console and the developer portal answer with a strict Content-Security-Policy (own origin
 * only, no inline script or style, no framing) and X-Frame-Options; with OIDC the console's
 * connect-src adds the issuer's origin and its token endpoint's (the browser signs in with PKCE).
 * That the built UIs work under these policies is checked in Chromium by test/console/.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { builtUiDir } from '../../../src/main/static/static-files.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

const STRICT = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

async function service (t: Parameters<typeof createTempDir>[0], env: Record<string, string> = {}) {
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '', ...env }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  return s
}
const headersOf = async (url: string) => {
  const r = await fetch(url, { headers: { accept: 'text/html', connection: 'close' } })
  await r.arrayBuffer()
  return { status: r.status, csp: r.headers.get('content-security-policy'), frame: r.headers.get('x-frame-options'), referrer: r.headers.get('referrer-policy') }
}

t.test('console and portal pages carry CSP and X-Frame-Options', async t => {
  t.ok(builtUiDir('console') !== null, 'the UIs are built (npm run build)')
  const s = await service(t)
  t.same(await headersOf(`http://127.0.0.1:${s.managementPort}/`), { status: 200, csp: `${STRICT}; connect-src 'self'`, frame: 'DENY', referrer: 'no-referrer' }, 'the console')
  t.same(await headersOf(`http://127.0.0.1:${s.gatewayPort}/portal/`), { status: 200, csp: `${STRICT}; connect-src 'self'`, frame: 'DENY', referrer: 'no-referrer' }, 'the portal')
})

t.test("with OIDC the console may call the issuer and its token endpoint's origin", async t => {
  const tokenHost = http.createServer((_req, res) => { res.writeHead(404).end() })
  await new Promise<void>(resolve => tokenHost.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { tokenHost.close() })
  const tokenOrigin = `http://127.0.0.1:${(tokenHost.address() as AddressInfo).port}`
  let discovered = 0
  const idp = http.createServer((req, res) => {
    const origin = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`
    if (req.url === '/.well-known/openid-configuration') {
      discovered++
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks`, token_endpoint: `${tokenOrigin}/token`, authorization_endpoint: `${origin}/authorize` }))
    } else res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}')
  })
  await new Promise<void>(resolve => idp.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { idp.close() })
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`
  const s = await service(t, { OIDC_ISSUER: issuer })
  // Discovery runs at start, in the background.
  for (let i = 0; i < 200 && discovered === 0; i++) await new Promise(resolve => setTimeout(resolve, 50))
  let h = await headersOf(`http://127.0.0.1:${s.managementPort}/`)
  for (let i = 0; i < 100 && h.csp?.includes(tokenOrigin) !== true; i++) { await new Promise(resolve => setTimeout(resolve, 50)); h = await headersOf(`http://127.0.0.1:${s.managementPort}/`) }
  t.equal(h.csp, `${STRICT}; connect-src 'self' ${issuer} ${tokenOrigin}`)
})
