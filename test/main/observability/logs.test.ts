/**
 * What an operator reads in the log of a real run: one access line per
 * management request (who, which route, status, duration), and a warn line
 * with the reason for every 502, 504 and failed workflow run.
 */
import t, { type Test } from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, createTestDatabase } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { freePort } from '../../helpers/ports.js'
import { eventually, recordingLogger } from '../cache/shared.js'

async function service (t: Test, env: Record<string, string> = {}) {
  const { logger, lines } = recordingLogger()
  const svc: Service = await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: await createTestDatabase(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', DATA_DIR: await createTempDir(t), WORKERS: '1', ...env
  }), { logger })
  t.teardown(async () => { await svc.close() })
  const token = await svc.issueToken!('alice', 'admin')
  const api = async (method: string, path: string, body?: unknown, bearer = token) => {
    const r = await fetch(`http://127.0.0.1:${svc.managementPort}${path}`, {
      method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await r.text()
    return { status: r.status, body: text === '' ? undefined : JSON.parse(text) }
  }
  return { svc, lines, api }
}

t.test('one info line per management request: sub, route, status, duration', async t => {
  const { lines, api } = await service(t)
  t.equal((await api('POST', '/api/v1/collections', { name: 'billing', base_path: '/billing', upstream_url: 'http://127.0.0.1:9' })).status, 201)
  t.equal((await api('GET', '/api/v1/collections/nope')).status, 404)
  t.equal((await api('GET', '/api/v1/collections', undefined, 'not-a-token')).status, 401)
  t.equal((await api('GET', '/livez')).status, 200)
  const access = () => lines.filter(l => l.msg === 'management request')
  t.ok(await eventually(() => access().length >= 3), 'three access lines')
  const [created, missing, refused] = access()
  t.match(created, { level: 30, sub: 'alice', method: 'POST', route: '/api/v1/collections', path: '/api/v1/collections', status: 201, ms: Number })
  t.match(missing, { sub: 'alice', method: 'GET', route: '/api/v1/collections/:id', path: '/api/v1/collections/nope', status: 404 })
  t.match(refused, { sub: null, route: '/api/v1/collections', status: 401 })
  t.notOk(access().some(l => l.path === '/livez'), 'probes are not logged at info')
})

t.test('a 502, a 504 and a failed workflow each log their reason once at warn, without secrets', async t => {
  const { svc, lines, api } = await service(t, { TEAM_SECRET: 'hdr-s3cret' })
  const closedPort = await freePort()
  const slow = await startBackend(t, (_req, res) => { setTimeout(() => res.end('late'), 3000) })
  const downR = (await api('POST', '/api/v1/collections', {
    name: 'down', base_path: '/down', upstream_url: `http://127.0.0.1:${closedPort}`, auth_required: false, headers: [{ name: 'x-team', env: 'TEAM_SECRET' }]
  }))
  t.equal(downR.status, 201, JSON.stringify(downR.body))
  const down = downR.body
  const late = (await api('POST', '/api/v1/collections', { name: 'late', base_path: '/late', upstream_url: slow.url, auth_required: false })).body
  const a = (await api('POST', '/api/v1/proxies', { collection_id: down.id, name: 'a', methods: ['GET'], path: '/a', status: 'published' })).body
  const b = (await api('POST', '/api/v1/proxies', { collection_id: late.id, name: 'b', methods: ['GET'], path: '/b', status: 'published', timeout_ms: 300 })).body
  const w = (await api('POST', '/api/v1/proxies', { collection_id: late.id, name: 'w', methods: ['GET'], path: '/w', status: 'published' })).body
  const saved = await api('PUT', `/api/v1/proxies/${w.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [{ id: 'trg', name: 'trigger', type: 'http_trigger', settings: {} }, { id: 'reply', name: 'reply', type: 'response_node', settings: { status: '{{ 40 + 2 }}', body: 'x' } }],
      edges: [{ id: 'e1', source: 'trg', target: 'reply' }],
      runtime_settings: { timeout_ms: 60000 } // generous: the first run starts a worker thread on a loaded machine
    }
  })
  t.equal(saved.status, 200, JSON.stringify(saved.body))

  const call = async (path: string) => {
    const r = await fetch(`http://127.0.0.1:${svc.gatewayPort}${path}`, { headers: { connection: 'close', authorization: 'Bearer client-s3cret' } })
    await r.text()
    return { status: r.status, rid: r.headers.get('x-request-id')! }
  }
  const unreachable = await call('/down/a?api_key=q-s3cret')
  const timedOut = await call('/late/b')
  const failed = await call('/late/w')
  t.same([unreachable.status, timedOut.status, failed.status], [502, 504, 500])
  const ok = await call('/late/none')
  t.equal(ok.status, 404)

  const warns = () => lines.filter(l => l.level === 40 && typeof l.request_id === 'string')
  t.ok(await eventually(() => warns().length >= 3), 'three warn lines')
  const of = (rid: string) => warns().filter(l => l.request_id === rid)
  t.equal(of(unreachable.rid).length, 1, 'once per request')
  t.match(of(unreachable.rid)[0], { msg: 'backend unreachable', status: 502, method: 'GET', path: '/down/a', route: '/down /a', proxy_id: a.id, collection_id: down.id, upstream: `http://127.0.0.1:${closedPort}`, kind: 'connect', error: /ECONNREFUSED/ })
  t.equal(of(timedOut.rid).length, 1)
  t.match(of(timedOut.rid)[0], { msg: 'backend timeout: no answer within 300 ms', status: 504, route: '/late /b', proxy_id: b.id, upstream: slow.url.replace(/\/$/, ''), kind: 'timeout' })
  t.equal(of(failed.rid).length, 1)
  t.match(of(failed.rid)[0], { msg: 'workflow failed', status: 500, route: '/late /w', proxy_id: w.id, upstream: 'workflow', code: 'workflow_failed', node_id: 'reply', execution_id: /./ })
  t.equal(of(ok.rid).length, 0, 'a 404 is not a failure to explain')
  const text = JSON.stringify(warns())
  for (const secret of ['hdr-s3cret', 'client-s3cret', 'q-s3cret']) t.notOk(text.includes(secret), `no ${secret} in the warn lines`)
})
