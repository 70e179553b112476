/** POST /api/v1/config/apply: one transaction, one version, every problem named; on both stores. */
import t from 'tap'
import { stringify as toYaml } from 'yaml'
import { startManagement, type TestManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'
import { populate } from './populate.js'

/** The secrets populate() set, as whoever applies a dump sets its ${ENV} references. */
const SECRETS: Record<string, string> = { GATEHOUSE_CREDENTIAL_API_TOKEN: 'bearer-s3cret', GATEHOUSE_CREDENTIAL_MAIL_BOX_PASSWORD: 'imap-s3cret' }
const resolved = (file: any) => JSON.parse(JSON.stringify(file).replace(/\$\{([A-Z_]+)\}/g, (_, n: string) => SECRETS[n]!))

const dump = async (m: TestManagement) => {
  const r = await m.call('GET', '/api/v1/config', { role: 'editor' })
  return { text: JSON.stringify(r.body), body: r.body, version: Number(/\d+/.exec(r.headers.get('etag') ?? '')?.[0]) }
}
const apply = async (m: TestManagement, file: unknown, query = '', headers: Record<string, string> = {}) =>
  await m.call('POST', `/api/v1/config/apply${query}`, { body: file, headers })

for (const kind of STORE_KINDS) {
  t.test(`apply a configuration file (${kind})`, async t => {
    const source = await startManagement(t, kind)
    await populate(t, source)
    const original = await dump(source)
    const file = resolved(original.body)

    const m = await startManagement(t, kind)
    const empty = await dump(m)

    // Dry run: the answer, and nothing changed.
    let r = await apply(m, file, '?dry_run=true')
    t.equal(r.status, 200, JSON.stringify(r.body))
    t.equal(r.body.applied, false)
    t.equal(r.body.changes.length, 10, 'two collections, three proxies, a policy, a client, a profile, two credentials')
    t.ok(r.body.changes.every((c: any) => c.action === 'create'))
    t.equal((await dump(m)).text, empty.text, 'a dry run changes nothing')
    t.equal((await dump(m)).version, empty.version, 'nor the version')
    t.equal(m.events.length, 0)

    // The dump of a populated gateway applied to an empty one reproduces it.
    r = await apply(m, toYaml(file), '', { 'content-type': 'application/yaml' })
    t.equal(r.status, 200, JSON.stringify(r.body))
    t.equal(r.body.applied, true)
    t.same(r.body.changes.map((c: any) => `${c.action} ${c.kind} ${c.key}`).sort(), [
      'create client acme', 'create collection /billing', 'create collection /orders', 'create credential api', 'create credential mail box',
      'create policy gold', 'create profile acme/key', 'create proxy /billing GET /invoices/{id}', 'create proxy /orders GET /list', 'create proxy /orders POST /create'
    ])
    const after = await dump(m)
    t.equal(after.text, original.text, 'a second dump is byte-identical to the source')
    t.equal(after.version, empty.version + 1, 'ONE configuration version for the whole file')
    t.equal(r.body.version, after.version)
    t.equal(m.configChanges, 1, 'one reload')
    t.equal(m.events.length, r.body.changes.length, 'an event per changed resource')
    t.same(new Set(m.events.map(e => e.resource_kind)), new Set(['collection', 'proxy', 'policy', 'client', 'profile', 'credential']))
    const audit = await m.call('GET', '/api/v1/audit-logs?limit=100&action=create')
    t.equal(audit.body.items.filter((a: any) => a.path === '/api/v1/config/apply').length, r.body.changes.length, 'an audit entry per changed resource')
    // The profile got key material of its own (never in the file).
    const clients = await m.call('GET', '/api/v1/clients')
    const profiles = await m.call('GET', `/api/v1/clients/${clients.body.items[0].id}/profiles`)
    const creds = await m.call('GET', `/api/v1/clients/${clients.body.items[0].id}/profiles/${profiles.body.items[0].id}/credentials`)
    t.match(creds.body.api_key, /^gh_/, 'an api_key profile is issued a key')
    // Secrets were resolved: the stored credential holds the value, not the reference.
    const cr = await m.call('GET', '/api/v1/credentials')
    t.equal(cr.body.items.find((c: any) => c.name === 'api').config.token, '********')

    // The same file again: nothing changes, no event, no version, no reload.
    const events = m.events.length
    r = await apply(m, file)
    t.equal(r.status, 200)
    t.same(r.body, { changes: [], applied: false, version: after.version }, 'applying the same file twice changes nothing')
    t.equal(m.events.length, events, 'no event')
    t.equal(m.configChanges, 1, 'no reload')
    t.equal((await dump(m)).version, after.version, 'no version')

    // One invalid resource among many: nothing changes, and every problem is named.
    const bad = structuredClone(file)
    bad.policies[0].rate_limit.requests = 0
    bad.policies.push({ name: 'silver', rate_limit: { requests: 5, per_seconds: 1 } })
    bad.collections[1].proxies[0].path = 'no-slash'
    bad.collections[1].proxies.push({ name: 'list2', methods: ['GET'], path: '/list/', target_path: '/x/{id}' })
    bad.clients[0].profiles[0].policy = 'platinum'
    bad.credentials[0].config.token = '${NOT_SET_ANYWHERE}'
    bad.collections.push({ name: 'dup', base_path: '/orders', upstream_url: 'http://127.0.0.1:9' })
    r = await apply(m, bad)
    t.equal(r.status, 400)
    t.equal(r.body.error.code, 'validation_failed')
    const fields = r.body.error.details.map((d: any) => d.field)
    t.ok(fields.includes('policies[0].rate_limit.requests'), 'the schema problem')
    t.ok(fields.includes('collections[1].proxies[0].path'), 'the path problem')
    t.ok(fields.includes('collections[2].base_path'), 'the duplicate key')
    t.ok(fields.includes('collections[1].proxies[2].target_path'), 'the target path problem')
    t.match(r.body.error.message, /nothing was changed/)
    // The references to the gateway are checked too, once the file itself is valid.
    const bad2 = structuredClone(file)
    bad2.clients[0].profiles[0].policy = 'platinum'
    bad2.clients[0].profiles[0].collections.push('/nowhere')
    bad2.credentials[0].config.token = '${NOT_SET_ANYWHERE}'
    bad2.policies[0].description = 'changed (must not land)'
    r = await apply(m, bad2)
    t.equal(r.status, 400)
    t.same(r.body.error.details.map((d: any) => d.field).sort(), ['clients[0].profiles[0].collections', 'clients[0].profiles[0].policy', 'credentials[0].config.token'])
    t.match(r.body.error.details.find((d: any) => d.field === 'credentials[0].config.token').message, /NOT_SET_ANYWHERE.*not resolved/)
    t.equal((await dump(m)).text, original.text, 'an invalid file changes nothing')
    t.equal(m.events.length, events)

    // Prune removes exactly what the file does not name.
    const smaller = structuredClone(file)
    smaller.collections = smaller.collections.filter((c: any) => c.base_path !== '/billing')
    smaller.clients[0].profiles[0].collections = ['/orders']
    smaller.credentials = smaller.credentials.filter((c: any) => c.name !== 'api')
    r = await apply(m, smaller)
    t.equal(r.status, 200)
    t.same(r.body.changes.map((c: any) => `${c.action} ${c.kind} ${c.key}`), ['update profile acme/key'], 'without prune, what the file leaves out stays')
    r = await apply(m, smaller, '?prune=true&dry_run=true')
    t.same(r.body.changes.map((c: any) => `${c.action} ${c.kind} ${c.key}`).sort(), ['delete collection /billing', 'delete credential api', 'delete proxy /billing GET /invoices/{id}'])
    t.equal(r.body.applied, false)
    r = await apply(m, smaller, '?prune=true')
    t.equal(r.status, 200)
    t.equal(r.body.applied, true)
    const pruned = await dump(m)
    t.same(pruned.body.collections.map((c: any) => c.base_path), ['/orders'])
    t.same(pruned.body.credentials.map((c: any) => c.name), ['mail box'])
    t.same(pruned.body.policies, original.body.policies, 'what the file names stays')
    t.same(pruned.body.clients[0].profiles[0].collections, ['/orders'])

    // Optimistic concurrency: If-Match on the file's ETag (the configuration version).
    r = await apply(m, file, '?dry_run=true', { 'if-match': `"${pruned.version - 1}"` })
    t.equal(r.status, 412, 'a stale version is refused')
    r = await apply(m, file, '', { 'if-match': `"${pruned.version}"` })
    t.equal(r.status, 200)
    t.equal((await dump(m)).text, original.text, 'and the current one applies')
    // A change of one proxy alone (whose insert bumps nothing by itself) is a new version too.
    const current = await dump(m)
    const more = structuredClone(file)
    more.collections[1].proxies.push({ name: 'extra', methods: ['GET'], path: '/extra', status: 'published' })
    r = await apply(m, more)
    t.same(r.body.changes, [{ kind: 'proxy', key: '/orders GET /extra', action: 'create' }])
    t.equal((await dump(m)).version, current.version + 1, 'one new version for one new proxy')

    r = await m.call('POST', '/api/v1/config/apply', { role: 'editor', body: file })
    t.equal(r.status, 403, 'admin only')
    r = await apply(m, 'format_version: 1\n', '', { 'content-type': 'application/xml' })
    t.equal(r.status, 415)
  })
}
