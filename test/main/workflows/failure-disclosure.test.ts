/**
 * A failed workflow tells an anonymous caller nothing of its internals (private
 * addresses, allowlist hints, code-node exceptions, sub-workflow ids): a generic
 * message with the request id; the details go to the log under that request id
 * and to the execution record.
 */
import { Writable } from 'node:stream'
import { pino } from 'pino'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir } from '../../helpers/db.js'
import { freePort } from '../../helpers/ports.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

t.test('the caller gets a generic 500 with its request id; the log and the record get the details', async t => {
  const lines: any[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(chunk.toString())); cb() } }))
  const config = loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', DATA_DIR: await createTempDir(t), WORKERS: '1', LOG_LEVEL: 'info' })
  const s = await start(config, { logger })
  t.teardown(() => s.close())
  const token = await s.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${s.managementPort}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify(body) })
    return await r.json() as any
  }
  const c = await api('POST', '/collections', { name: 'c', base_path: '/c', upstream_url: 'http://127.0.0.1:9', auth_required: false })
  const p = await api('POST', '/proxies', { collection_id: c.id, name: 'p', methods: ['GET'], path: '/x', status: 'published' })
  const closedPort = await freePort()
  await api('PUT', `/proxies/${p.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('fetch', 'http_request_node', { method: 'GET', url: `http://10.0.0.7:${closedPort}/internal`, timeout_ms: 2000 }),
        n('reply', 'response_node', { status: 200, body: '{{fetch.response.body}}' })],
      edges: [e('trg', 'fetch'), e('fetch', 'reply')]
    }
  })
  const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/c/x`, { headers: { connection: 'close' } })
  t.equal(r.status, 500)
  const rid = r.headers.get('x-request-id')
  const text = await r.text()
  t.match(JSON.parse(text), { error: { code: 'workflow_failed' }, request_id: rid })
  t.notMatch(text, /10\.0\.0\.7|OUTBOUND_ALLOWLIST|fetch|internal/, 'no address, hint or node id reaches the caller')
  const logged = lines.find(l => l.msg === 'workflow failed')
  t.match(logged, { request_id: rid, node_id: 'fetch', error: /10\.0\.0\.7/ }, 'the log has the details under the request id')
  let records: any
  for (let i = 0; i < 100; i++) {
    records = await api('GET', `/workflows/${p.workflow_id as string}/executions`)
    if (records.items?.length > 0) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.match(records.items[0], { id: logged.execution_id, status: 'error', error: { node_id: 'fetch', message: /10\.0\.0\.7/ } }, 'and the execution record, by the logged id')
})
