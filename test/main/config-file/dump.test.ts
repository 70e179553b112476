/** GET /api/v1/config: the whole gateway as one file, on both stores. */
import t from 'tap'
import { parse as parseYaml } from 'yaml'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'
import { populate } from './populate.js'

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
