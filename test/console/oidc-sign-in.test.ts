/**
 * Console sign-in with an external OIDC issuer: authorization code + PKCE (S256) against
 * a real provider on loopback (discovery, authorize, token, JWKS), the code exchanged by
 * the browser, the access token then accepted by the management API.
 */
import { createHash, randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import t from 'tap'
import { cspViolations, launchBrowser, startService } from '../helpers/browser.js'

async function startProvider (t: { teardown (fn: () => unknown): void }) {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const jwk = { ...await exportJWK(publicKey), kid: 'k1', alg: 'RS256', use: 'sig' }
  const codes = new Map<string, { challenge: string, method: string, clientId: string, redirect: string }>()
  const seen: { authorize?: URLSearchParams, verifierOk?: boolean } = {}
  const server = http.createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const url = new URL(req.url ?? '/', base)
    // Discovery and the token endpoint are read by the browser from another origin.
    res.setHeader('access-control-allow-origin', '*')
    const json = (v: unknown, status = 200) => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v)) }
    if (url.pathname === '/.well-known/openid-configuration') {
      json({ issuer: base, jwks_uri: `${base}/keys`, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token` })
    } else if (url.pathname === '/keys') json({ keys: [jwk] })
    else if (url.pathname === '/authorize') {
      // The user signs in and consents at once.
      seen.authorize = url.searchParams
      const code = randomBytes(8).toString('hex')
      const q = url.searchParams
      codes.set(code, { challenge: q.get('code_challenge') ?? '', method: q.get('code_challenge_method') ?? '', clientId: q.get('client_id') ?? '', redirect: q.get('redirect_uri') ?? '' })
      res.writeHead(302, { location: `${q.get('redirect_uri') ?? ''}?code=${code}&state=${q.get('state') ?? ''}` }).end()
    } else if (url.pathname === '/token' && req.method === 'POST') {
      let raw = ''
      req.on('data', c => { raw += String(c) })
      req.on('end', () => {
        const form = new URLSearchParams(raw)
        const grant = codes.get(form.get('code') ?? '')
        const verifier = form.get('code_verifier') ?? ''
        seen.verifierOk = grant !== undefined && grant.method === 'S256' && createHash('sha256').update(verifier).digest('base64url') === grant.challenge
        if (!seen.verifierOk || grant?.clientId !== form.get('client_id') || grant?.redirect !== form.get('redirect_uri')) { json({ error: 'invalid_grant', error_description: 'The code or its verifier is wrong.' }, 400); return }
        codes.delete(form.get('code') ?? '')
        new SignJWT({ roles: ['editor'] }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(base).setSubject('carol').setIssuedAt().setExpirationTime('5m').sign(privateKey)
          .then(token => json({ access_token: token, token_type: 'Bearer', expires_in: 300 }), () => json({}, 500))
      })
    } else { res.statusCode = 404; res.end() }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

t.test('OIDC authorization code with PKCE signs the console in', async t => {
  const provider = await startProvider(t)
  const svc = await startService(t, { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: 'gatehouse-console' })
  const browser = await launchBrowser(t)
  const page = await browser.newPage()
  await page.goto(`${svc.console}/collections`)
  await page.getByRole('button', { name: /^Sign in with 127\.0\.0\.1/ }).click()
  await page.getByText('carol').waitFor()
  await page.getByRole('heading', { name: 'Collections' }).waitFor()
  const q = provider.seen.authorize!
  t.equal(q.get('client_id'), 'gatehouse-console')
  t.equal(q.get('response_type'), 'code')
  t.equal(q.get('code_challenge_method'), 'S256')
  t.equal(q.get('redirect_uri'), `${svc.console}/`)
  t.ok(provider.seen.verifierOk, 'the token request proved the PKCE verifier')
  t.equal(new URL(page.url()).search, '', 'the code left the address bar')
  t.equal(new URL(page.url()).pathname, '/collections', 'back where sign-in started')
  t.ok(await page.getByText('editor', { exact: true }).isVisible(), 'the role comes from the roles claim')
  t.equal(await page.getByRole('button', { name: 'New collection' }).count(), 1, 'an editor may create')
})

t.test('no page broke the Content-Security-Policy', async t => {
  t.same(cspViolations(), [], 'Chromium reported no refused script, style or connection')
})
