/** GET /api/v1/config: the whole gateway as one file, on both stores. */
import t, { type Test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { startManagement, type TestManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

/** Two collections, proxies (one with a workflow, one draft), a policy, a client with an api_key profile, two credentials. */
async function populate (t: Test, m: TestManagement) {
  const ids: string[] = []
  const ok = async (method: string, path: string, body: unknown) => {
    const r = await m.call(method, path, { body })
    t.equal(r.status, 201, `${method} ${path}`)
    ids.push(r.body.id)
    return r.body
  }
  // Created out of key order, so the dump's sorting shows.
  const orders = await ok('POST', '/api/v1/collections', { name: 'orders', base_path: '/orders', upstream_url: 'http://127.0.0.1:9/o', cors: { allow_origins: ['https://app.example.com'] } })
  const billing = await ok('POST', '/api/v1/collections', { name: 'billing', base_path: '/billing', upstream: { targets: [{ url: 'http://127.0.0.1:9/a', weight: 10 }, { url: 'http://127.0.0.1:9/b', weight: 30 }] } })
  await ok('POST', '/api/v1/proxies', { collection_id: orders.id, name: 'list', methods: ['GET'], path: '/list', status: 'published' })
  const create = await ok('POST', '/api/v1/proxies', { collection_id: orders.id, name: 'create', methods: ['POST'], path: '/create' })
  t.equal((await m.call('PUT', `/api/v1/proxies/${create.id}/workflow`, { body: { enabled: true } })).status, 200, 'workflow enabled')
  await ok('POST', '/api/v1/proxies', { collection_id: billing.id, name: 'invoices', methods: ['GET'], path: '/invoices/{id}' })
  const gold = await ok('POST', '/api/v1/policies', { name: 'gold', rate_limit: { requests: 100, per_seconds: 60 } })
  const acme = await ok('POST', '/api/v1/clients', { name: 'acme' })
  const prof = await ok('POST', `/api/v1/clients/${acme.id}/profiles`, { name: 'key', auth_type: 'api_key', policy_id: gold.id, collection_ids: [orders.id, billing.id] })
  await ok('POST', '/api/v1/credentials', { name: 'mail box', type: 'imap', config: { host: '127.0.0.1', port: 143, username: 'u', password: 'imap-s3cret', tls: { secure: false, reject_unauthorized: false } } })
  await ok('POST', '/api/v1/credentials', { name: 'api', type: 'http_bearer', config: { token: 'bearer-s3cret' } })
  return { apiKey: prof.credentials.api_key as string, ids }
}

for (const kind of STORE_KINDS) {
  t.test(`GET /api/v1/config (${kind})`, async t => {
    const m = await startManagement(t, kind)
    let r = await m.call('GET', '/api/v1/config', { role: 'editor' })
    t.equal(r.status, 200)
    t.same(r.body, { format_version: 1, collections: [], policies: [], clients: [], credentials: [] }, 'an empty gateway is an empty file')
    const { apiKey, ids } = await populate(t, m)

    r = await m.call('GET', '/api/v1/config', { role: 'editor' })
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /^application\/json/)
    const file = r.body
    const text = JSON.stringify(file)
    for (const secret of ['imap-s3cret', 'bearer-s3cret', apiKey, '********']) t.notOk(text.includes(secret), `no ${secret} in the file`)
    for (const id of ids) t.notOk(text.includes(id), `record id ${id} is not in the file`)
    t.notOk(/"(created_at|updated_at|version|collection_id|policy_id|client_id|workflow_id)"/.test(text), 'no ids, versions or timestamps')

    t.same(file.collections.map((c: any) => c.base_path), ['/billing', '/orders'], 'collections sorted by base_path')
    const [billing, orders] = file.collections
    t.same(billing.upstream.targets.map((x: any) => x.weight), [10, 30], 'a multi-target upstream is kept')
    t.equal(orders.upstream_url, 'http://127.0.0.1:9/o')
    t.same(orders.cors.allow_origins, ['https://app.example.com'])
    t.same(orders.proxies.map((p: any) => `${p.methods.join(',')} ${p.path}`), ['GET /list', 'POST /create'], 'proxies sorted by method + path')
    t.equal(orders.proxies[1].workflow_enabled, true)
    t.ok(orders.proxies[1].workflow.nodes.length > 0, 'the workflow definition is in the file')
    t.equal(orders.proxies[1].status, 'draft', 'drafts are in the file')
    t.equal(orders.proxies[0].status, 'published')
    t.same(file.policies, [{ name: 'gold', description: '', status: 'enabled', rate_limit: { requests: 100, per_seconds: 60 }, quota: null }])
    t.match(file.clients, [{ name: 'acme', status: 'active', profiles: [{ name: 'key', auth_type: 'api_key', policy: 'gold', collections: ['/billing', '/orders'] }] }])
    t.same(file.credentials.map((c: any) => c.name), ['api', 'mail box'])
    t.same(file.credentials[0].config, { token: '${GATEHOUSE_CREDENTIAL_API_TOKEN}' })
    t.equal(file.credentials[1].config.password, '${GATEHOUSE_CREDENTIAL_MAIL_BOX_PASSWORD}')
    t.equal(file.credentials[1].config.username, 'u', 'fields that are not secret are kept')

    r = await m.call('GET', '/api/v1/config', { role: 'editor' })
    t.equal(JSON.stringify(r.body), text, 'two dumps of the same state are identical')

    r = await m.call('GET', '/api/v1/config', { role: 'editor', headers: { accept: 'application/yaml' } })
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /^application\/yaml/)
    t.same(parseYaml(r.body), file, 'the YAML file says what the JSON one says')
    const again = await m.call('GET', '/api/v1/config', { role: 'editor', headers: { accept: 'application/yaml' } })
    t.equal(again.body, r.body, 'two YAML dumps are identical')

    r = await m.call('GET', '/api/v1/config', { role: 'viewer' })
    t.equal(r.status, 403, 'a viewer, who does not see drafts, cannot dump')
    r = await m.call('GET', '/api/v1/config', { role: null })
    t.equal(r.status, 401)
  })
}
