/** A populated gateway for the configuration-file tests, created through the REST routes. */
import type { Test } from 'tap'
import type { TestManagement } from '../../helpers/management.js'

/** Two collections, proxies (one with a workflow, one draft), a policy, a client with an api_key profile, two credentials. */
export async function populate (t: Test, m: TestManagement) {
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
