/**
 * The spec's "Which operation emits what" table, walked row by row through real
 * REST calls on a full service (src/main/server.ts start()), on both stores, with
 * every event read from a real SSE stream as a UI would read it. Each row asserts
 * the exact event (envelope and per-kind fields, nothing more); the rows listed as
 * emitting nothing, and rejected or failed changes, are checked to emit nothing
 * by a sentinel change whose event must be the very next one on the stream.
 */
import { readFileSync } from 'node:fs'
import type { Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase, silentLogger, type StoreKind } from '../../helpers/db.js'
import { openStream } from '../../helpers/sse.js'

const petstore = JSON.parse(readFileSync(new URL('../../fixtures/openapi/petstore-3.0.json', import.meta.url), 'utf8'))
const IMAP_PASSWORD = 's3cret-imap-pass'

/** Walks the table on a fresh service over the given store (one test file per store keeps each within the file timeout). */
export async function walkEmitsTable (t: Test, kind: StoreKind): Promise<void> {
  const config = loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: kind === 'postgres' ? await createTestDatabase(t) : '',
    DATA_DIR: await createTempDir(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1'
  })
  const svc = await start(config, { logger: silentLogger })
  t.teardown(async () => { await svc.close() })
  const base = `http://127.0.0.1:${svc.managementPort}`
  const tokens = {
    viewer: await svc.issueToken!('watcher', 'viewer'),
    editor: await svc.issueToken!('eddie', 'editor'),
    admin: await svc.issueToken!('ada', 'admin')
  }
  const api = async (role: keyof typeof tokens | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { connection: 'close', ...headers }
    if (role !== null) h.authorization = `Bearer ${tokens[role]}`
    if (body !== undefined && !(body instanceof FormData)) h['content-type'] ??= 'application/json'
    const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body) })
    const text = await res.text()
    let parsed: any = text
    try { parsed = text === '' ? undefined : JSON.parse(text) } catch {}
    return { status: res.status, body: parsed, headers: res.headers }
  }
  const ok = async (status: number, method: string, path: string, role: keyof typeof tokens, body?: unknown) => {
    const r = await api(role, method, path, body)
    if (r.status !== status) t.fail(`${method} ${path}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }

  const refused = await fetch(`${base}/api/v1/events/stream`, { headers: { connection: 'close' } })
  t.equal(refused.status, 401, 'the stream needs a token')
  t.equal((await refused.json() as any).error.code, 'unauthorized')
  // Browsers' EventSource cannot send headers: the stream (and only the stream) also takes ?access_token=.
  const byQuery = await openStream(t, `${base}/api/v1/events/stream?access_token=${tokens.viewer}`)
  t.equal(byQuery.res.status, 200, 'the stream accepts the token as ?access_token=')
  byQuery.abort()
  t.equal((await fetch(`${base}/api/v1/events/stream?access_token=not-a-token`, { headers: { connection: 'close' } })).status, 401)
  t.equal((await api(null, 'GET', `/api/v1/collections?access_token=${tokens.viewer}`)).status, 401, 'other routes want the header')
  const { res, r: stream } = await openStream(t, `${base}/api/v1/events/stream`, { authorization: `Bearer ${tokens.viewer}` })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/event-stream/)
  const position = await stream.next()
  t.ok(position?.id !== undefined && position.data.length === 0, 'the stream starts with its position')

  const rawData: string[] = []
  const ids = new Set<string>()
  /** The next event on the stream must be exactly `expected` (plus a fresh occurred_at_unix). */
  const expectEvent = async (row: string, expected: Record<string, unknown>) => {
    const before = Math.floor(Date.now() / 1000)
    const frame = await stream.nextData()
    if (frame === undefined) { t.fail(`${row}: no event arrived`); return }
    t.equal(frame.data.length, 1, `${row}: one data line`)
    t.ok(frame.id !== undefined && !ids.has(frame.id), `${row}: a fresh SSE id`)
    ids.add(frame.id!)
    rawData.push(frame.data[0]!)
    const { occurred_at_unix: at, ...rest } = JSON.parse(frame.data[0]!)
    t.ok(Number.isInteger(at) && at >= before - 60 && at <= Math.floor(Date.now() / 1000) + 1, `${row}: occurred_at_unix is integer Unix seconds`)
    t.strictSame(rest, { schema_version: 1, ...expected }, row)
  }
  // A sentinel change whose event must come next: proves that nothing was emitted since the last expected event.
  const sentinel = await ok(201, 'POST', '/api/v1/policies', 'admin', { name: 'sentinel' })
  await expectEvent('sentinel policy created', { resource_kind: 'policy', policy_id: sentinel.id, operation: 'created', actor_sub: 'ada' })
  const expectNothing = async (what: string) => {
    await ok(200, 'PUT', `/api/v1/policies/${sentinel.id}/toggle-status`, 'admin')
    await expectEvent(`nothing emitted by: ${what}`, { resource_kind: 'policy', policy_id: sentinel.id, operation: 'status_changed', actor_sub: 'ada' })
  }

  // --- collections ---------------------------------------------------------
  const backend = 'http://127.0.0.1:9'
  const coll = await ok(201, 'POST', '/api/v1/collections', 'editor', { name: 'shop', base_path: '/shop', upstream_url: backend })
  await expectEvent('POST /collections', { resource_kind: 'collection', collection_id: coll.id, operation: 'created', actor_sub: 'eddie' })
  await ok(200, 'PUT', `/api/v1/collections/${coll.id}`, 'editor', { description: 'all things shop' })
  await expectEvent('PUT /collections/:id', { resource_kind: 'collection', collection_id: coll.id, operation: 'updated', actor_sub: 'eddie' })
  await ok(200, 'PUT', `/api/v1/collections/${coll.id}/status`, 'editor', { status: 'disabled' })
  await expectEvent('PUT /collections/:id/status', { resource_kind: 'collection', collection_id: coll.id, operation: 'status_changed', actor_sub: 'eddie' })

  // --- proxies -------------------------------------------------------------
  const proxy = await ok(201, 'POST', '/api/v1/proxies', 'editor', { collection_id: coll.id, name: 'orders', methods: ['GET'], path: '/orders/{id}' })
  await expectEvent('POST /proxies', { resource_kind: 'proxy', proxy_id: proxy.id, collection_id: coll.id, operation: 'created', actor_sub: 'eddie' })
  await ok(200, 'PUT', `/api/v1/proxies/${proxy.id}`, 'editor', { status: 'published' })
  await expectEvent('PUT /proxies/:id', { resource_kind: 'proxy', proxy_id: proxy.id, collection_id: coll.id, operation: 'updated', actor_sub: 'eddie' })

  // --- proxy workflow: definition and enabled flag are reported separately ---
  await ok(200, 'PUT', `/api/v1/proxies/${proxy.id}/workflow`, 'editor', { enabled: true })
  await expectEvent('PUT /proxies/:id/workflow (enable; a default definition is seeded)',
    { resource_kind: 'proxy_workflow', proxy_id: proxy.id, definition_changed: true, enabled_changed: true, workflow_enabled: true, actor_sub: 'eddie' })
  const saved = (await api('editor', 'GET', `/api/v1/proxies/${proxy.id}/workflow`)).body.workflow
  await ok(200, 'PUT', `/api/v1/proxies/${proxy.id}/workflow`, 'editor', { workflow: { ...saved, runtime_settings: { ...saved.runtime_settings, timeout_ms: 1234 } } })
  await expectEvent('PUT /proxies/:id/workflow (definition only)',
    { resource_kind: 'proxy_workflow', proxy_id: proxy.id, definition_changed: true, enabled_changed: false, workflow_enabled: true, actor_sub: 'eddie' })
  await ok(200, 'PUT', `/api/v1/proxies/${proxy.id}/workflow`, 'editor', { enabled: false })
  await expectEvent('PUT /proxies/:id/workflow (disable)',
    { resource_kind: 'proxy_workflow', proxy_id: proxy.id, definition_changed: false, enabled_changed: true, workflow_enabled: false, actor_sub: 'eddie' })

  // --- duplicate, import, OpenAPI import ------------------------------------
  const copy = await ok(201, 'POST', `/api/v1/collections/${coll.id}/duplicate`, 'editor', { base_path: '/shop-copy' })
  await expectEvent('POST /collections/:id/duplicate',
    { resource_kind: 'collection', collection_id: coll.id, operation: 'duplicated', related_collection_id: copy.id, actor_sub: 'eddie' })
  t.equal(copy.related_collection_id, copy.id, 'the response identifies the new collection')

  const file = (await api('viewer', 'GET', `/api/v1/collections/${coll.id}/export`)).body
  file.collections[0].collection.base_path = '/shop-imported'
  const form = new FormData()
  form.append('file', new Blob([JSON.stringify(file)], { type: 'application/json' }), 'shop.gatehouse.json')
  const imported = await ok(201, 'POST', '/api/v1/collections/import', 'editor', form)
  await expectEvent('multipart collection import',
    { resource_kind: 'collection', collection_id: imported.items[0].id, operation: 'imported', actor_sub: 'eddie' })

  const fromOpenApi = await ok(201, 'POST', '/api/v1/collections/import/openapi', 'editor',
    { document: petstore, base_path: '/petstore', upstream_url: 'http://127.0.0.1:9/api/v3' })
  await expectEvent('POST /collections/import/openapi',
    { resource_kind: 'collection', collection_id: fromOpenApi.id, operation: 'openapi_imported', actor_sub: 'eddie' })

  // --- credentials ---------------------------------------------------------
  const imap = { host: '127.0.0.1', port: 1, username: 'mailer', password: IMAP_PASSWORD, tls: { secure: false } }
  const cred = await ok(201, 'POST', '/api/v1/credentials', 'admin', { name: 'mail', type: 'imap', config: imap })
  await expectEvent('POST /credentials', { resource_kind: 'credential', credential_id: cred.id, operation: 'created', actor_sub: 'ada' })
  await ok(200, 'PUT', `/api/v1/credentials/${cred.id}`, 'admin', { config: { ...cred.config, username: 'mailer2' } })
  await expectEvent('PUT /credentials/:id', { resource_kind: 'credential', credential_id: cred.id, operation: 'updated', actor_sub: 'ada' })

  // --- policies ------------------------------------------------------------
  const pol = await ok(201, 'POST', '/api/v1/policies', 'admin', { name: 'gold', rate_limit: { requests: 10, per_seconds: 60 } })
  await expectEvent('POST /policies', { resource_kind: 'policy', policy_id: pol.id, operation: 'created', actor_sub: 'ada' })
  await ok(200, 'PUT', `/api/v1/policies/${pol.id}`, 'admin', { description: 'ten a minute' })
  await expectEvent('PUT /policies/:id', { resource_kind: 'policy', policy_id: pol.id, operation: 'updated', actor_sub: 'ada' })
  await ok(200, 'PUT', `/api/v1/policies/${pol.id}/toggle-status`, 'admin')
  await expectEvent('PUT /policies/:id/toggle-status', { resource_kind: 'policy', policy_id: pol.id, operation: 'status_changed', actor_sub: 'ada' })

  // --- clients and profiles ------------------------------------------------
  const cl = await ok(201, 'POST', '/api/v1/clients', 'admin', { name: 'acme' })
  await expectEvent('POST /clients', { resource_kind: 'client', client_id: cl.id, operation: 'created', actor_sub: 'ada' })
  await ok(200, 'PUT', `/api/v1/clients/${cl.id}`, 'admin', { description: 'a customer' })
  await expectEvent('PUT /clients/:id', { resource_kind: 'client', client_id: cl.id, operation: 'updated', actor_sub: 'ada' })
  await ok(200, 'PUT', `/api/v1/clients/${cl.id}/status`, 'admin', { status: 'suspended' })
  await expectEvent('PUT /clients/:id/status', { resource_kind: 'client', client_id: cl.id, operation: 'status_changed', actor_sub: 'ada' })

  const P = `/api/v1/clients/${cl.id}/profiles`
  const prof = await ok(201, 'POST', P, 'admin', { name: 'key', auth_type: 'api_key', collection_ids: [coll.id] })
  await expectEvent('POST /clients/:clientId/profiles', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'created', actor_sub: 'ada' })
  await ok(200, 'PUT', `${P}/${prof.id}`, 'admin', { name: 'key-2' })
  await expectEvent('PUT .../profiles/:id', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'updated', actor_sub: 'ada' })
  const rotated = await ok(200, 'POST', `${P}/${prof.id}/rotate`, 'admin')
  t.equal(rotated.rotated, true)
  await expectEvent('POST .../profiles/:id/rotate (api_key)', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'updated', actor_sub: 'ada' })
  const asJwt = await ok(200, 'PUT', `${P}/${prof.id}/auth-type`, 'admin', { auth_type: 'jwt' })
  await expectEvent('PUT .../profiles/:id/auth-type', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'updated', actor_sub: 'ada' })
  const rotatedJwt = await ok(200, 'POST', `${P}/${prof.id}/rotate`, 'admin')
  await expectEvent('POST .../profiles/:id/rotate (jwt)', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'updated', actor_sub: 'ada' })

  // --- what emits nothing --------------------------------------------------
  const oidc = await ok(201, 'POST', P, 'admin', { name: 'sso', auth_type: 'oidc', oidc: { issuer: 'https://idp.example' } })
  await expectEvent('POST profile (oidc)', { resource_kind: 'profile', profile_id: oidc.id, client_id: cl.id, operation: 'created', actor_sub: 'ada' })
  const mtls = await ok(201, 'POST', P, 'admin', { name: 'cert', auth_type: 'mtls', mtls_fingerprint: 'AB'.repeat(32) })
  await expectEvent('POST profile (mtls)', { resource_kind: 'profile', profile_id: mtls.id, client_id: cl.id, operation: 'created', actor_sub: 'ada' })
  t.match(await ok(200, 'POST', `${P}/${oidc.id}/rotate`, 'admin'), { rotated: false, auth_type: 'oidc' })
  t.match(await ok(200, 'POST', `${P}/${mtls.id}/rotate`, 'admin'), { rotated: false, auth_type: 'mtls' })
  await expectNothing('rotate on oidc and mtls profiles (no-op answers)')

  await ok(200, 'POST', `/api/v1/proxies/${proxy.id}/workflow/validate`, 'editor', {})
  await expectNothing('workflow validation')

  for (const path of ['/api/v1/collections', `/api/v1/collections/${coll.id}`, `/api/v1/collections/${coll.id}/export`,
    `/api/v1/collections/${coll.id}/openapi`, '/api/v1/collections/export', `/api/v1/collections/export?ids=${coll.id}`,
    '/api/v1/proxies', `/api/v1/proxies/${proxy.id}`, `/api/v1/proxies/${proxy.id}/workflow`]) await ok(200, 'GET', path, 'viewer')
  await expectNothing('read-only collection and proxy routes (list, get, export file, OpenAPI download, bulk export)')
  for (const path of ['/api/v1/credentials', `/api/v1/credentials/${cred.id}`, '/api/v1/policies', `/api/v1/policies/${pol.id}`,
    '/api/v1/clients', `/api/v1/clients/${cl.id}`, P, `${P}/${prof.id}`]) await ok(200, 'GET', path, 'viewer')
  await expectNothing('GET list or detail of credentials, policies, clients and profiles')
  const material = await ok(200, 'GET', `${P}/${prof.id}/credentials`, 'admin')
  await expectNothing('GET profile credentials')
  await ok(200, 'GET', '/api/v1/auth/config', 'viewer')
  t.match(await ok(200, 'POST', '/api/v1/credentials/validate', 'admin', { type: 'imap', config: imap }), { ok: false, reason: 'host_unreachable' })
  await expectNothing('GET /auth/config and POST /credentials/validate')
  await ok(200, 'GET', '/api/v1/copilot/thread', 'viewer')
  await ok(200, 'PUT', '/api/v1/copilot/thread', 'viewer', { messages: [{ role: 'user', content: 'hello' }] })
  await ok(204, 'DELETE', '/api/v1/developer-portal/copilot/thread', 'viewer')
  await expectNothing('assistant thread routes (no event kind of their own)')

  // --- rejected or failed changes emit nothing ------------------------------
  t.equal((await api(null, 'POST', '/api/v1/collections', { name: 'x', base_path: '/x', upstream_url: backend })).status, 401)
  t.equal((await api('viewer', 'POST', '/api/v1/collections', { name: 'x', base_path: '/x', upstream_url: backend })).status, 403)
  t.equal((await api('editor', 'POST', '/api/v1/policies', { name: 'x' })).status, 403)
  t.equal((await api('editor', 'POST', '/api/v1/collections', { name: 'x', base_path: 'no-slash', upstream_url: backend })).status, 400)
  t.equal((await api('editor', 'POST', '/api/v1/collections', { name: 'x', base_path: '/shop', upstream_url: backend })).status, 409)
  t.equal((await api('editor', 'PUT', `/api/v1/collections/${coll.id}`, { name: 'y' }, { 'if-match': '"999"' })).status, 412)
  t.equal((await api('editor', 'DELETE', '/api/v1/proxies/no-such-proxy')).status, 404)
  t.equal((await api('admin', 'DELETE', `/api/v1/credentials/${cred.id}`, undefined, { 'if-match': '"1"' })).status, 412)
  t.equal((await api('admin', 'PUT', `/api/v1/policies/${pol.id}/toggle-status`, { status: 'paused' })).status, 400)
  t.equal((await api('admin', 'PUT', `${P}/${prof.id}/auth-type`, { auth_type: 'oidc', oidc: { issuer: 'not a url' } })).status, 400)
  t.equal((await api('admin', 'POST', `/api/v1/clients/no-such-client/profiles`, { name: 'k' })).status, 404)
  t.equal((await api('editor', 'PUT', `/api/v1/proxies/${proxy.id}/workflow`, { workflow: { nodes: [], edges: [] }, enabled: true })).status, 400)
  await expectNothing('refused, invalid, conflicting, stale and not-found changes')

  // --- deletes (last: they remove what the rows above used) ------------------
  await ok(204, 'DELETE', `${P}/${prof.id}`, 'admin')
  await expectEvent('DELETE .../profiles/:id', { resource_kind: 'profile', profile_id: prof.id, client_id: cl.id, operation: 'deleted', actor_sub: 'ada' })
  await ok(204, 'DELETE', `/api/v1/clients/${cl.id}`, 'admin')
  await expectEvent('DELETE /clients/:id', { resource_kind: 'client', client_id: cl.id, operation: 'deleted', actor_sub: 'ada' })
  await ok(204, 'DELETE', `/api/v1/policies/${pol.id}`, 'admin')
  await expectEvent('DELETE /policies/:id', { resource_kind: 'policy', policy_id: pol.id, operation: 'deleted', actor_sub: 'ada' })
  await ok(204, 'DELETE', `/api/v1/credentials/${cred.id}`, 'admin')
  await expectEvent('DELETE /credentials/:id', { resource_kind: 'credential', credential_id: cred.id, operation: 'deleted', actor_sub: 'ada' })
  await ok(204, 'DELETE', `/api/v1/proxies/${proxy.id}`, 'editor')
  await expectEvent('DELETE /proxies/:id', { resource_kind: 'proxy', proxy_id: proxy.id, collection_id: coll.id, operation: 'deleted', actor_sub: 'eddie' })
  await ok(204, 'DELETE', `/api/v1/collections/${coll.id}`, 'editor')
  await expectEvent('DELETE /collections/:id', { resource_kind: 'collection', collection_id: coll.id, operation: 'deleted', actor_sub: 'eddie' })
  await expectNothing('the deletes beyond their own events')

  // --- no event carries a body or a secret -----------------------------------
  const secrets = [IMAP_PASSWORD, prof.credentials.api_key, rotated.credentials.api_key, asJwt.credentials.jwt_secret, rotatedJwt.credentials.jwt_secret, material.jwt_secret]
  t.ok(secrets.every(s => typeof s === 'string' && s.length > 8), 'the secrets to look for are known')
  const all = rawData.join('\n')
  for (const s of secrets) t.notOk(all.includes(s), 'no secret on the stream')
  t.notOk(/"(name|config|description|base_path|upstream_url|workflow|path|methods)"/.test(all), 'no resource body fields on the stream')
}
