/**
 * What a workflow run needs from the store besides its definition (the sub-workflows it calls, the
 * credentials its HTTP requests use) is read once per saved definition and kept until the
 * configuration changes. Two instances share one PostgreSQL (a throwaway cluster, crashed with
 * `pg_ctl -m immediate`) and one Redis: while PostgreSQL is down both keep answering from the
 * workflow; once it is back, a rotated secret is used at once on the instance that changed it and
 * after its reload on the other.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startPgCluster } from '../../helpers/pg-cluster.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'
import { PATIENCE_MS, retryUntil } from '../../helpers/wait.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

t.test('sub-workflows and credentials of a run through a PostgreSQL outage, on two instances', async t => {
  const backend = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ authorization: req.headers.authorization ?? null }))
  })
  await new Promise<void>(resolve => backend.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { backend.closeAllConnections(); backend.close() })
  const echo = `http://127.0.0.1:${(backend.address() as AddressInfo).port}/echo`

  const cluster = await startPgCluster()
  t.teardown(async () => { await cluster.close() })
  const dataDir = await createTempDir(t)
  const prefix = `gh-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`
  const mk = async () => await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: cluster.url, CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0',
    LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: dataDir, SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
    CONFIG_POLL_INTERVAL_MS: '200', DB_QUERY_TIMEOUT_MS: '2000', OUTBOUND_ALLOWLIST: '127.0.0.1'
  }), { logger: silentLogger, keyPrefix: prefix })
  const a = await mk()
  const b = await mk()
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  const token = await a.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${a.managementPort}/api/v1${path}`, {
      method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
      body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(PATIENCE_MS)
    })
    const text = await r.text()
    return { status: r.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  const call = async (s: Service) => {
    const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/wf/outer/4`, { method: 'POST', headers: { connection: 'close' }, signal: AbortSignal.timeout(PATIENCE_MS) })
    const text = await r.text()
    return { status: r.status, body: r.status === 200 ? JSON.parse(text) : text }
  }

  const cred = await api('POST', '/credentials', { name: 'echo', type: 'http_bearer', config: { token: 'one' } })
  t.equal(cred.status, 201)
  const c = (await api('POST', '/collections', { name: 'wf', base_path: '/wf', upstream_url: 'http://127.0.0.1:9', auth_required: false })).body
  // The sub-workflow is a draft proxy's: never served itself, only called.
  const inner = (await api('POST', '/proxies', { collection_id: c.id, name: 'inner', methods: ['POST'], path: '/inner', status: 'draft' })).body
  t.equal((await api('PUT', `/proxies/${inner.id as string}/workflow`, {
    workflow: {
      nodes: [n('in', 'http_trigger'), n('call', 'http_request_node', { url: echo, credentials_id: cred.body.id, timeout_ms: 5000 }),
        n('out', 'response_node', { status: 200, body: { doubled: '{{ trigger.n * 2 }}', sent: '{{ call.response.body.authorization }}' } })],
      edges: [e('in', 'call'), e('call', 'out')]
    }
  })).status, 200)
  const outer = (await api('POST', '/proxies', { collection_id: c.id, name: 'outer', methods: ['POST'], path: '/outer/{n}', status: 'published' })).body
  t.equal((await api('PUT', `/proxies/${outer.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('sub', 'execute_subworkflow', { workflow_id: inner.workflow_id, input: { n: '{{ Number(trigger.params.n) }}' } }),
        n('reply', 'response_node', { status: 200, body: '{{sub}}' })],
      edges: [e('trg', 'sub'), e('sub', 'reply')]
    }
  })).status, 200)

  t.same(await call(a), { status: 200, body: { doubled: 8, sent: 'Bearer one' } })
  const onB = await retryUntil(async () => await call(b), r => r.status === 200)
  t.same(onB, { status: 200, body: { doubled: 8, sent: 'Bearer one' } }, 'instance B serves it after its reload')

  await cluster.crash()
  for (const [name, s] of [['A', a], ['B', b]] as const) {
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await call(s))
    t.same(answers, Array(5).fill({ status: 200, body: { doubled: 8, sent: 'Bearer one' } }), `instance ${name} runs the workflow with PostgreSQL down`)
  }
  const refused = await api('PUT', `/credentials/${cred.body.id as string}`, { config: { token: 'two' } })
  t.equal(refused.status, 503, 'a change is refused while PostgreSQL is down')

  await cluster.start()
  const rotated = await retryUntil(async () => await api('PUT', `/credentials/${cred.body.id as string}`, { config: { token: 'two' } }), r => r.status === 200, undefined, 100)
  t.equal(rotated.status, 200, 'the rotation is taken once PostgreSQL is back')
  t.same(await call(a), { status: 200, body: { doubled: 8, sent: 'Bearer two' } }, 'the new secret at once on the instance that changed it')
  const seen = await retryUntil(async () => await call(b), r => (r.body as { sent?: string })?.sent === 'Bearer two')
  t.same(seen, { status: 200, body: { doubled: 8, sent: 'Bearer two' } }, 'and on the other instance after its reload')
})
