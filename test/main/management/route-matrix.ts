/**
 * Every management route against the answers CONVENTIONS.md fixes: 401 without or
 * with a bad token, 403 one role too low (and for a token with no known role), 404
 * for an unknown id on every `:id` route, 412 for a stale If-Match on every PUT/DELETE
 * (and the record left as it was). None of these refusals may emit an event.
 */
import type { Test } from 'tap'
import type { StoreKind } from '../../helpers/db.js'
import { startManagement, type TestManagement } from '../../helpers/management.js'

type Role = 'viewer' | 'editor' | 'admin'
interface RouteCase {
  method: string
  /** With real ids. */
  path: string
  role: Role
  body?: unknown
  /** The same route with an unknown id (404). */
  missing?: string[]
  /** PUT/DELETE honouring If-Match: the path to read the version back from (412 leaves it unchanged). */
  stale?: string
}

const OWN = new Set(['collections', 'proxies', 'credentials', 'policies', 'clients', 'copilot', 'developer-portal', 'audit-logs'])
const LOWER: Record<Role, Role | null> = { viewer: null, editor: 'viewer', admin: 'editor' }
const NOPE = 'no-such-id'
export const UPSTREAM = 'http://127.0.0.1:9'

export async function fixtures (m: TestManagement) {
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await m.call(method, path, { body })
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  const coll = await ok('POST', '/api/v1/collections', { name: 'c', base_path: '/c', upstream_url: UPSTREAM })
  const proxy = await ok('POST', '/api/v1/proxies', { collection_id: coll.id, name: 'p', methods: ['GET'], path: '/p' })
  const cred = await ok('POST', '/api/v1/credentials', { name: 'b', type: 'http_bearer', config: { token: 'tok-123456789' } })
  const pol = await ok('POST', '/api/v1/policies', { name: 'gold' })
  const cl = await ok('POST', '/api/v1/clients', { name: 'acme' })
  const prof = await ok('POST', `/api/v1/clients/${cl.id}/profiles`, { name: 'k', auth_type: 'api_key' })
  await ok('PUT', '/api/v1/copilot/thread', { messages: [] })
  return { coll, proxy, cred, pol, cl, prof }
}

function routes (f: Awaited<ReturnType<typeof fixtures>>): RouteCase[] {
  const c = `/api/v1/collections/${f.coll.id}`
  const p = `/api/v1/proxies/${f.proxy.id}`
  const cr = `/api/v1/credentials/${f.cred.id}`
  const po = `/api/v1/policies/${f.pol.id}`
  const cl = `/api/v1/clients/${f.cl.id}`
  const pr = `${cl}/profiles/${f.prof.id}`
  const profileMissing = (suffix = '') => [`${cl}/profiles/${NOPE}${suffix}`, `/api/v1/clients/${NOPE}/profiles/${f.prof.id}${suffix}`]
  const openapi = { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {} }
  return [
    // collections, import/export
    { method: 'GET', path: '/api/v1/collections', role: 'viewer' },
    { method: 'POST', path: '/api/v1/collections', role: 'editor', body: { name: 'n', base_path: '/n', upstream_url: UPSTREAM } },
    { method: 'GET', path: c, role: 'viewer', missing: [`/api/v1/collections/${NOPE}`] },
    { method: 'PUT', path: c, role: 'editor', body: { description: 'd' }, missing: [`/api/v1/collections/${NOPE}`], stale: c },
    { method: 'DELETE', path: c, role: 'editor', missing: [`/api/v1/collections/${NOPE}`], stale: c },
    { method: 'PUT', path: `${c}/status`, role: 'editor', body: { status: 'disabled' }, missing: [`/api/v1/collections/${NOPE}/status`], stale: c },
    { method: 'POST', path: `${c}/duplicate`, role: 'editor', body: {}, missing: [`/api/v1/collections/${NOPE}/duplicate`] },
    { method: 'GET', path: `${c}/export`, role: 'viewer', missing: [`/api/v1/collections/${NOPE}/export`] },
    { method: 'GET', path: `${c}/openapi`, role: 'viewer', missing: [`/api/v1/collections/${NOPE}/openapi`] },
    { method: 'GET', path: '/api/v1/collections/export', role: 'viewer', missing: [`/api/v1/collections/export?ids=${NOPE}`] },
    { method: 'POST', path: '/api/v1/collections/import', role: 'editor', body: { format: 'gatehouse.collection', version: 1, collections: [] } },
    { method: 'POST', path: '/api/v1/collections/import/openapi', role: 'editor', body: { document: openapi, upstream_url: UPSTREAM } },
    // proxies and their workflow
    { method: 'GET', path: '/api/v1/proxies', role: 'viewer' },
    { method: 'POST', path: '/api/v1/proxies', role: 'editor', body: { collection_id: f.coll.id, name: 'q', methods: ['GET'], path: '/q' } },
    { method: 'POST', path: '/api/v1/proxies/bulk', role: 'editor', body: { action: 'publish', ids: [f.proxy.id] } },
    { method: 'GET', path: p, role: 'viewer', missing: [`/api/v1/proxies/${NOPE}`] },
    { method: 'PUT', path: p, role: 'editor', body: { description: 'd' }, missing: [`/api/v1/proxies/${NOPE}`], stale: p },
    { method: 'DELETE', path: p, role: 'editor', missing: [`/api/v1/proxies/${NOPE}`], stale: p },
    { method: 'POST', path: `${p}/duplicate`, role: 'editor', body: {}, missing: [`/api/v1/proxies/${NOPE}/duplicate`] },
    { method: 'GET', path: `${p}/workflow`, role: 'viewer', missing: [`/api/v1/proxies/${NOPE}/workflow`] },
    { method: 'PUT', path: `${p}/workflow`, role: 'editor', body: { enabled: false }, missing: [`/api/v1/proxies/${NOPE}/workflow`], stale: p },
    { method: 'POST', path: `${p}/workflow/validate`, role: 'editor', body: {}, missing: [`/api/v1/proxies/${NOPE}/workflow/validate`] },
    // credentials
    { method: 'GET', path: '/api/v1/credentials', role: 'viewer' },
    { method: 'POST', path: '/api/v1/credentials', role: 'admin', body: { name: 'x', type: 'http_bearer', config: { token: 'abc' } } },
    { method: 'POST', path: '/api/v1/credentials/validate', role: 'admin', body: { type: 'imap', config: { host: '127.0.0.1', port: 1, username: 'u', password: 'p', tls: { secure: false } } } },
    { method: 'GET', path: cr, role: 'viewer', missing: [`/api/v1/credentials/${NOPE}`] },
    { method: 'PUT', path: cr, role: 'admin', body: { name: 'renamed' }, missing: [`/api/v1/credentials/${NOPE}`], stale: cr },
    { method: 'DELETE', path: cr, role: 'admin', missing: [`/api/v1/credentials/${NOPE}`], stale: cr },
    // policies
    { method: 'GET', path: '/api/v1/policies', role: 'viewer' },
    { method: 'POST', path: '/api/v1/policies', role: 'admin', body: { name: 'x' } },
    { method: 'GET', path: po, role: 'viewer', missing: [`/api/v1/policies/${NOPE}`] },
    { method: 'PUT', path: po, role: 'admin', body: { description: 'd' }, missing: [`/api/v1/policies/${NOPE}`], stale: po },
    { method: 'PUT', path: `${po}/toggle-status`, role: 'admin', missing: [`/api/v1/policies/${NOPE}/toggle-status`], stale: po },
    { method: 'DELETE', path: po, role: 'admin', missing: [`/api/v1/policies/${NOPE}`], stale: po },
    // clients and profiles
    { method: 'GET', path: '/api/v1/clients', role: 'viewer' },
    { method: 'POST', path: '/api/v1/clients', role: 'admin', body: { name: 'x' } },
    { method: 'GET', path: cl, role: 'viewer', missing: [`/api/v1/clients/${NOPE}`] },
    { method: 'PUT', path: cl, role: 'admin', body: { description: 'd' }, missing: [`/api/v1/clients/${NOPE}`], stale: cl },
    { method: 'PUT', path: `${cl}/status`, role: 'admin', body: { status: 'suspended' }, missing: [`/api/v1/clients/${NOPE}/status`], stale: cl },
    { method: 'DELETE', path: cl, role: 'admin', missing: [`/api/v1/clients/${NOPE}`], stale: cl },
    { method: 'GET', path: `${cl}/profiles`, role: 'viewer', missing: [`/api/v1/clients/${NOPE}/profiles`] },
    { method: 'POST', path: `${cl}/profiles`, role: 'admin', body: { name: 'x' }, missing: [`/api/v1/clients/${NOPE}/profiles`] },
    { method: 'GET', path: pr, role: 'viewer', missing: profileMissing() },
    { method: 'PUT', path: pr, role: 'admin', body: { name: 'renamed' }, missing: profileMissing(), stale: pr },
    { method: 'DELETE', path: pr, role: 'admin', missing: profileMissing(), stale: pr },
    { method: 'POST', path: `${pr}/rotate`, role: 'admin', missing: profileMissing('/rotate'), stale: pr },
    { method: 'PUT', path: `${pr}/auth-type`, role: 'admin', body: { auth_type: 'none' }, missing: profileMissing('/auth-type'), stale: pr },
    { method: 'GET', path: `${pr}/credentials`, role: 'viewer', missing: profileMissing('/credentials') },
    // threads, audit, the stream
    { method: 'GET', path: '/api/v1/copilot/thread', role: 'viewer' },
    { method: 'PUT', path: '/api/v1/copilot/thread', role: 'viewer', body: { messages: [] }, stale: '/api/v1/copilot/thread' },
    { method: 'DELETE', path: '/api/v1/copilot/thread', role: 'viewer', stale: '/api/v1/copilot/thread' },
    { method: 'GET', path: '/api/v1/developer-portal/copilot/thread', role: 'viewer' },
    { method: 'PUT', path: '/api/v1/developer-portal/copilot/thread', role: 'viewer', body: { messages: [] } },
    { method: 'DELETE', path: '/api/v1/developer-portal/copilot/thread', role: 'viewer' },
    { method: 'GET', path: '/api/v1/audit-logs', role: 'viewer' }
  ]
}

/** 401, 403, 404 and 412 on every route over the given store (one test file per store keeps each within the file timeout). */
export async function checkEveryRoute (t: Test, kind: StoreKind): Promise<void> {
  const m = await startManagement(t, kind)
  const f = await fixtures(m)
  const cases = routes(f)
  m.events.length = 0
  const noRole = await m.auth.local!.sign({ sub: 'guest', role: 'guest' as Role })

  // Every registered non-public route of these resources is in the list above, so a new one is
  // not left out (workflow, execution and MCP routes have their own tests).
  const fixtureIds = [f.coll.id, f.proxy.id, f.cred.id, f.pol.id, f.cl.id, f.prof.id]
  const shapeOf = (method: string, path: string) => `${method} ${path.split('/').map(s => fixtureIds.includes(s) ? ':' : s).join('/')}`
  const listed = new Set(cases.map(c => shapeOf(c.method, c.path)))
  for (const r of m.server.router.routes) {
    if (r.opts.public === true || !OWN.has(r.segments[2] ?? '') || r.segments.some(s => s.startsWith('workflow'))) continue
    const shape = `${r.method} /${r.segments.map(s => s.startsWith(':') ? ':' : s).join('/')}`
    t.ok(listed.has(shape), `${shape} is in the matrix`)
  }

  for (const c of cases) {
    const what = `${c.method} ${c.path}`
    const send = async (role: Role | null, path = c.path, headers: Record<string, string> = {}) =>
      await m.call(c.method, path, { role, body: c.body, headers })

    let r = await send(null)
    t.equal(r.status, 401, `${what} without a token`)
    t.equal(r.body?.error?.code, 'unauthorized')
    t.equal(r.headers.get('www-authenticate'), 'Bearer')
    r = await m.call(c.method, c.path, { role: null, body: c.body, headers: { authorization: 'Bearer not-a-jwt' } })
    t.equal(r.status, 401, `${what} with a bad token`)
    r = await m.call(c.method, c.path, { role: null, body: c.body, headers: { authorization: `Bearer ${noRole}` } })
    t.equal(r.status, 403, `${what} with a token carrying no known role`)
    const lower = LOWER[c.role]
    if (lower !== null) {
      r = await send(lower)
      t.equal(r.status, 403, `${what} as ${lower} (needs ${c.role})`)
      t.equal(r.body?.error?.code, 'forbidden')
      t.match(r.body?.error?.message, c.role)
    }
    for (const path of c.missing ?? []) {
      r = await send('admin', path)
      t.equal(r.status, 404, `${c.method} ${path} is not found`)
      t.equal(r.body?.error?.code, 'not_found')
      t.type(r.body?.error?.message, 'string')
    }
    if (c.stale !== undefined) {
      const before = await m.call('GET', c.stale)
      r = await send('admin', c.path, { 'if-match': '"999"' })
      t.equal(r.status, 412, `${what} with a stale If-Match`)
      t.equal(r.body?.error?.code, 'precondition_failed')
      const after = await m.call('GET', c.stale)
      t.equal(after.status, 200, `${what}: still there`)
      t.equal(after.body.version, before.body.version, `${what}: unchanged`)
    }
  }
  t.same(m.events, [], 'no refusal emitted an event')

  // A current If-Match is accepted, as a quoted, weak or bare version.
  const c = `/api/v1/collections/${f.coll.id}`
  const v = (await m.call('GET', c)).body.version
  t.equal((await m.call('PUT', c, { body: { description: 'a' }, headers: { 'if-match': `"${v}"` } })).status, 200)
  t.equal((await m.call('PUT', c, { body: { description: 'b' }, headers: { 'if-match': `W/"${v + 1}"` } })).status, 200)
  t.equal((await m.call('PUT', c, { body: { description: 'c' }, headers: { 'if-match': '*' } })).status, 200)
  const etag = (await m.call('GET', c)).headers.get('etag')
  t.equal((await m.call('DELETE', c, { headers: { 'if-match': etag! } })).status, 204, 'the ETag of a read deletes')
}
