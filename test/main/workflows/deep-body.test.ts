/** Request bodies nested too deep for the main thread to clone or stringify are refused before a workflow runs. */
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

async function service (t: Test) {
  const config = loadConfig({ GATEWAY_THREADS: '1', DATA_DIR: await createTempDir(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1' })
  const s = await start(config, { logger: silentLogger })
  t.teardown(() => s.close())
  const token = await s.issueToken!('alice', 'editor')
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) })
    return { status: r.status, body: await r.json() as any }
  }
  return { s, api }
}

t.test('a JSON body nested 10,000 deep is a 400 naming the limit, not a 500 pointing at a missing record', async t => {
  const { s, api } = await service(t)
  const c = (await api('POST', '/collections', { name: 'deep', base_path: '/deep', upstream_url: 'http://127.0.0.1:9', auth_required: false })).body
  const p = (await api('POST', '/proxies', { collection_id: c.id, name: 'echo', methods: ['POST'], path: '/echo', status: 'published' })).body
  t.equal((await api('PUT', `/proxies/${p.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [{ id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} }, { id: 'r', name: 'r', type: 'response_node', settings: { status: 200, body: '{{trigger.request.body}}' } }],
      edges: [{ id: '1', source: 'trg', target: 'r' }]
    }
  })).status, 200)
  const post = async (body: string) => await fetch(`http://127.0.0.1:${s.gatewayPort}/deep/echo`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body })
  let r = await post('['.repeat(10_000) + ']'.repeat(10_000))
  t.equal(r.status, 400)
  t.match(await r.json(), { error: { code: 'bad_request', message: /nests deeper than 128 levels/ } })
  r = await post(JSON.stringify({ text: '[[[['.repeat(100), nested: [[[1]]] }))
  t.equal(r.status, 200, 'brackets inside strings do not count')
  t.same(await r.json(), { text: '[[[['.repeat(100), nested: [[[1]]] })
})
