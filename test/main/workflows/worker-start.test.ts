/**
 * A gateway that serves no workflow keeps no worker thread; the first workflow it serves starts
 * one as soon as it is configured (not at its first request), as /metrics shows.
 */
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'
import { retryUntil } from '../../helpers/wait.js'

t.test('worker threads start with the first workflow served', async t => {
  const backend = await startBackend(t)
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: await createTempDir(t), DATABASE_URL: '' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, p: string, body?: unknown) =>
    await (await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as any
  const threads = async () => {
    const samples = parsePrometheus(await (await fetch(`http://127.0.0.1:${s.managementPort}/metrics`)).text())
    return Object.fromEntries(samples.filter(x => x.name === 'gatehouse_workflow_threads').map(x => [x.labels.lane, x.value]))
  }

  t.same(await threads(), { light: 0, cpu: 0 }, 'a fresh start runs no worker thread')
  const shop = await api('POST', '/collections', { name: 'shop', base_path: '/shop', upstream_url: backend.url, auth_required: false })
  await api('POST', '/proxies', { collection_id: shop.id, name: 'items', methods: ['GET'], path: '/items', status: 'published' })
  const plain = await fetch(`http://127.0.0.1:${s.gatewayPort}/shop/items`)
  t.equal(plain.status, 200)
  await plain.text()
  t.same(await threads(), { light: 0, cpu: 0 }, 'nor does one forwarding to backends')

  const hello = await api('POST', '/proxies', { collection_id: shop.id, name: 'hello', methods: ['GET'], path: '/hello', status: 'published' })
  const saved = await api('PUT', `/proxies/${hello.id}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [
        { id: 't', name: 'trigger', type: 'http_trigger', settings: {} },
        { id: 'r', name: 'reply', type: 'response_node', settings: { status: 200, body: { greeting: 'hello' } } }
      ],
      edges: [{ id: 'e', source: 't', target: 'r' }]
    }
  })
  t.equal(saved.workflow_enabled, true)
  const running = await retryUntil(threads, r => r.light === 1)
  t.same(running, { light: 1, cpu: 0 }, 'the workflow\'s configuration started one thread, before any request')
  const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/shop/hello`)
  t.equal(r.status, 200)
  t.same(await r.json(), { greeting: 'hello' })
  t.same(await threads(), { light: 1, cpu: 0 }, 'and it stays')
})
