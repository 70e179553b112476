/**
 * GATEWAY_THREADS=2 on the real service (start()): two uWS apps on one port in one process.
 * Connections are spread by the kernel (SO_REUSEPORT); each request here opens its own
 * connection, and gatehouse_gateway_thread_requests_total shows both threads served. Checked:
 * a change is served by every thread when the management answer returns, a rate limit is exact
 * across threads, one request-log record and one /metrics count per request, workflow and /mcp
 * requests handed to the main thread, a crashed thread restarts while the other answers, the port
 * stays exclusive to this process, and the shutdown is clean.
 */
import { spawn } from 'node:child_process'
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { createGateway } from '../../../src/main/gateway/index.js'
import { start, type Service } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { startBackend } from '../../helpers/gateway.js'
import { freePort } from '../../helpers/ports.js'
import { threadedClient } from '../../helpers/threads.js'
import { eventually, retryUntil } from '../../helpers/wait.js'

const ENTRY = new URL('../../../dist/src/main/index.js', import.meta.url).pathname

t.setTimeout(600_000)

const config = async (t: Parameters<typeof createTempDir>[0], over: Record<string, string> = {}) => loadConfig({
  GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '2', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
  DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', ...over
})

const perThread = (c: Awaited<ReturnType<typeof threadedClient>>, text: string) => c.perThread(text)

t.test('two gateway threads serve one configuration, one limit, one log', async t => {
  const backend = await startBackend(t, (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })) })
  const s = await start(await config(t), { logger: silentLogger })
  let closed = false
  t.teardown(async () => { if (!closed) await s.close() })
  const c = await threadedClient(s)
  t.ok(s.gatewayThreads !== null, 'the service runs gateway threads')
  t.equal(c.sample(await c.metrics(), 'gatehouse_gateway_threads'), 2)

  const coll = await c.api('POST', '/collections', { name: 'open', base_path: '/open', upstream_url: backend.url, auth_required: false })
  // Each change is served by both threads as soon as its management answer is back.
  for (let i = 0; i < 5; i++) {
    await c.api('POST', '/proxies', { collection_id: coll.id, name: `p${i}`, methods: ['GET'], path: `/p${i}`, status: 'published' })
    const statuses = await Promise.all(Array.from({ length: 16 }, async () => (await c.call(`/open/p${i}`)).status))
    t.same(statuses, new Array(16).fill(200), `proxy p${i} is served by every thread when its creation answers`)
  }
  const served = perThread(c, await c.metrics())
  t.ok(await eventually(async () => perThread(c, await c.metrics()).every(n => n > 0)), `both threads served requests (${served.join(', ')} so far)`)

  // A rate limit counted across threads: 40 in the window, the 41st refused, over 41 connections.
  const proxy = await c.api('POST', '/proxies', { collection_id: coll.id, name: 'limited', methods: ['GET'], path: '/limited', status: 'published' })
  const paid = await c.api('POST', '/collections', { name: 'paid', base_path: '/paid', upstream_url: backend.url })
  await c.api('POST', '/proxies', { collection_id: paid.id, name: 'x', methods: ['GET'], path: '/x', status: 'published' })
  const pol = await c.api('POST', '/policies', { name: 'forty', rate_limit: { requests: 40, per_seconds: 300 } })
  const cl = await c.api('POST', '/clients', { name: 'acme' })
  const prof = await c.api('POST', `/clients/${cl.id}/profiles`, { name: 'k', auth_type: 'api_key', collection_ids: [paid.id], policy_id: pol.id })
  const auth = { authorization: `Bearer ${prof.credentials.api_key}`, 'x-client-id': cl.id, 'x-profile-id': prof.id }
  const before = perThread(c, await c.metrics())
  const statuses = await Promise.all(Array.from({ length: 41 }, async () => (await c.call('/paid/x', auth)).status))
  t.equal(statuses.filter(x => x === 200).length, 40, 'exactly the limit is admitted')
  t.equal(statuses.filter(x => x === 429).length, 1, 'the 41st is refused')
  t.ok(await eventually(async () => {
    const after = perThread(c, await c.metrics())
    return after[0]! - before[0]! + after[1]! - before[1]! === 41
  }), 'the 41 requests are counted once each')
  const after = perThread(c, await c.metrics())
  t.ok(after.every((n, i) => n > before[i]!), `both threads took part in the burst (${after.map((n, i) => n - before[i]!).join(' + ')})`)

  // One request-log record per request, with distinct ids.
  const items = await retryUntil(async () => (await c.api('GET', `/request-logs?profile_id=${prof.id}&limit=100`)).items as any[], x => x.length >= 41)
  t.equal(items.length, 41, 'one record per request')
  t.equal(new Set(items.map(x => x.request_id)).size, 41)
  // /metrics: the client's total is the requests sent, whichever thread served them.
  t.ok(await eventually(async () => c.sample(await c.metrics(), `gatehouse_client_requests_total{client_id="${cl.id}"}`) === 41), 'client requests_total equals the requests sent')

  // A proxy's workflow runs on the main thread, whichever thread took the request.
  await c.api('PUT', `/proxies/${proxy.id}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [{ id: 't', name: 'trigger', type: 'http_trigger', settings: {} }, { id: 'r', name: 'answer', type: 'response_node', settings: { status: 201, body: { from: 'workflow' } } }],
      edges: [{ id: 'e', source: 't', target: 'r' }]
    }
  })
  const wf = await Promise.all(Array.from({ length: 12 }, async () => await c.call('/open/limited')))
  t.same(wf.map(x => x.status), new Array(12).fill(201), 'every thread hands the workflow to the main thread')
  t.same(JSON.parse(wf[0]!.body), { from: 'workflow' })

  // The gateway MCP at /mcp: several sessions, their connections on either thread.
  for (let i = 0; i < 4; i++) {
    const mcp = new Client({ name: 'agent', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${s.gatewayPort}/mcp`), { requestInit: { headers: { ...auth, connection: 'close' } } })
    await mcp.connect(transport)
    const tools = (await mcp.listTools()).tools.map(x => x.name)
    t.ok(tools.includes('execute_endpoint'), `MCP session ${i} answers`)
    await mcp.close()
  }
  // The portal is served in every thread.
  const portal = await Promise.all(Array.from({ length: 8 }, async () => await c.call('/portal/catalogue.json')))
  t.same(portal.map(x => x.status), new Array(8).fill(200), 'every thread serves the portal')
  t.ok(portal.every(x => x.body === portal[0]!.body && x.body.includes('"paid"')), 'with the same catalogue')

  // A crashed thread is started again; the other one answers meanwhile.
  // (Connections the kernel queued on the crashing thread's socket at that instant are reset with
  // it; the requests below are sent once it is gone, before it is back.)
  const restarted = s.gatewayThreads!.restarted(1)
  s.gatewayThreads!.crash(1)
  t.ok(await eventually(() => s.gatewayThreads!.running === 1, undefined, 5), 'the crashed thread is gone')
  const during = await Promise.all(Array.from({ length: 16 }, async () => (await c.call('/open/p0')).status))
  t.same(during, new Array(16).fill(200), 'requests are answered while a thread restarts')
  await restarted
  const m = await c.metrics()
  t.equal(c.sample(m, 'gatehouse_gateway_thread_restarts_total'), 1, 'the restart is counted')
  t.equal(c.sample(m, 'gatehouse_gateway_threads'), 2)
  const beforeRestart = perThread(c, m)
  const again = await Promise.all(Array.from({ length: 24 }, async () => (await c.call('/open/p0')).status))
  t.same(again, new Array(24).fill(200))
  t.ok(await eventually(async () => perThread(c, await c.metrics())[1]! > beforeRestart[1]!), 'the restarted thread serves again')

  // Shutdown: both threads stop, the port is free.
  const port = s.gatewayPort
  closed = true
  await s.close()
  await t.rejects(fetch(`http://127.0.0.1:${port}/livez`, { headers: { connection: 'close' } }), 'nothing listens after close')
})

t.test('the port stays this process\'s: a second gateway is refused, threaded or not', async t => {
  const s = await start(await config(t), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  for (const threads of ['1', '2']) {
    const other = createGateway({ config: loadConfig({ PORT: String(s.gatewayPort), HOST: '127.0.0.1', LOG_LEVEL: 'silent', GATEWAY_THREADS: threads }), logger: silentLogger, readiness: async () => ({ ok: true, checks: {} }), portSharing: threads === '2' ? 'first' : undefined })
    await t.rejects(other.listen(), { message: `The gateway port ${s.gatewayPort} (PORT) on 127.0.0.1 is already in use` }, `GATEWAY_THREADS=${threads}`)
    await other.close()
  }
  // npm start of a second service with threads on that port: exit 1, one line naming the port.
  const env = {
    ...process.env, GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '2', PORT: String(s.gatewayPort), HOST: '127.0.0.1', MANAGEMENT_PORT: String(await freePort()),
    DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', LOG_LEVEL: 'silent'
  }
  const out = await new Promise<{ code: number | null, err: string }>(resolve => {
    const p = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    p.stderr.on('data', d => { err += d })
    p.on('exit', code => { resolve({ code, err }) })
  })
  t.equal(out.code, 1, 'a second service refuses to start')
  t.equal(out.err.trim().split('\n').length, 1, out.err)
  t.match(out.err, `The gateway port ${s.gatewayPort} (PORT) on 127.0.0.1 is already in use by another process`)
  const r = await fetch(`http://127.0.0.1:${s.gatewayPort}/livez`, { headers: { connection: 'close' } })
  t.equal(r.status, 200, 'the first one still answers')
})
