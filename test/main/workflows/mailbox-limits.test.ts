/**
 * Each workflow proxy's mailbox limits (runtime_settings max_concurrency, max_queue) follow the
 * served configuration: set at every reload, on every instance, before any run, whichever
 * definition the run is (a builder run of a posted definition included); the mailbox of a proxy
 * that went is gone from /metrics, once its runs have finished.
 *
 * The workflow's HTTP request waits at a loopback backend until the test releases it, so "a run
 * in flight" is an event the test waits for, not a guess about timing.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { storeConfig } from '../../helpers/db.js'
import { parsePrometheus } from '../../helpers/prometheus-text.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'
import { eventually, PATIENCE_MS } from '../../helpers/wait.js'
import { uniquePrefix } from '../cache/shared.js'
import { startService, type WorkflowService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

/** A backend that holds every request until released. */
async function holdingBackend (t: { teardown (fn: () => unknown): void }): Promise<{ url: string, held: () => number, release: () => void }> {
  const held: http.ServerResponse[] = []
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => { held.push(res) })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`,
    held: () => held.length,
    release: () => { for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}') }
  }
}

const workflow = (url: string, runtime: Record<string, unknown>, body = 'done') => ({
  nodes: [n('trg', 'http_trigger'), n('call', 'http_request_node', { method: 'GET', url, timeout_ms: 120_000 }), n('reply', 'response_node', { status: 200, body })],
  edges: [e('trg', 'call'), e('call', 'reply')],
  runtime_settings: { timeout_ms: 120_000, ...runtime }
})

/** This instance's mailboxes as /metrics shows them, by proxy id. */
async function mailboxes (w: WorkflowService): Promise<Record<string, { running: number, queued: number, max_concurrency: number, max_queue: number }>> {
  const r = await fetch(`http://127.0.0.1:${w.s.managementPort}/metrics`, { headers: { connection: 'close' } })
  const out: Record<string, { running: number, queued: number, max_concurrency: number, max_queue: number }> = {}
  for (const s of parsePrometheus(await r.text())) {
    const id = s.labels.proxy_id
    if (id === undefined || !s.name.startsWith('gatehouse_workflow_mailbox_')) continue
    const m = out[id] ??= { running: 0, queued: 0, max_concurrency: 0, max_queue: 0 }
    if (s.name === 'gatehouse_workflow_mailbox_runs') m[s.labels.state as 'running' | 'queued'] = s.value
    if (s.name === 'gatehouse_workflow_mailbox_limit') m[s.labels.limit as 'max_concurrency' | 'max_queue'] = s.value
  }
  return out
}

const call = async (w: WorkflowService, p: any) => {
  const r = await fetch(`${w.gateway}${p.base as string}/work`, { method: 'POST', headers: { connection: 'close' }, signal: AbortSignal.timeout(PATIENCE_MS) })
  await r.arrayBuffer()
  return r.status
}

t.test('a saved limit applies to the next run of any kind, with no run of the saved definition first', async t => {
  const w = await startService(t, 'embedded', { WORKERS: '1' })
  const backend = await holdingBackend(t)
  const p = await w.proxy('/work')
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true, workflow: workflow(backend.url, { max_concurrency: 1, max_queue: 0 }) })).status, 200)
  t.match((await mailboxes(w))[p.id], { max_concurrency: 1, max_queue: 0, running: 0 }, 'configured by the save, before any run')

  // Builder runs of a posted definition (not the saved one) go through the proxy's mailbox, with the saved limits.
  const testRun = async () => await w.api('POST', `/workflows/${p.workflow_id as string}/test`, { workflow: workflow(backend.url, {}, 'posted'), input: {} })
  const first = testRun()
  t.ok(await eventually(() => backend.held() === 1), 'the first run is in flight')
  const second = await testRun()
  t.equal(second.status, 503, 'one in flight and no queue: the second is refused at once')
  t.equal(second.body.error.code, 'service_unavailable')
  backend.release()
  t.equal((await first).status, 200)
  t.equal((await first).body.status, 'success')

  // A raised limit: the next runs use it at once.
  t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true, workflow: workflow(backend.url, { max_concurrency: 2, max_queue: 0 }) })).status, 200)
  t.match((await mailboxes(w))[p.id], { max_concurrency: 2, max_queue: 0 })
  const two = [call(w, p), testRun().then(r => r.status)]
  t.ok(await eventually(() => backend.held() === 2), 'two runs in flight at once')
  t.equal(await call(w, p), 503, 'a third is refused')
  backend.release()
  t.same(await Promise.all(two), [200, 200])
})

t.test("a proxy that went takes its mailbox with it, once that mailbox's runs have finished", async t => {
  const w = await startService(t, 'embedded', { WORKERS: '1' })
  const backend = await holdingBackend(t)
  const gone = await w.proxy('/work')
  const busy = await w.proxy('/work')
  for (const p of [gone, busy]) {
    t.equal((await w.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true, workflow: workflow(backend.url, { max_concurrency: 3 }) })).status, 200)
  }
  let boxes = await mailboxes(w)
  t.ok(boxes[gone.id] !== undefined && boxes[busy.id] !== undefined, 'both workflow proxies have a mailbox')

  t.equal((await w.api('DELETE', `/proxies/${gone.id as string}`, undefined, 'admin')).status, 204)
  t.equal((await mailboxes(w))[gone.id], undefined, 'a deleted proxy: its mailbox is gone after the reload')

  // Unpublished while a run is in flight: the run finishes, then the mailbox goes.
  const running = call(w, busy)
  t.ok(await eventually(() => backend.held() === 1))
  t.equal((await w.api('PUT', `/proxies/${busy.id as string}`, { status: 'draft' }, 'admin')).status, 200)
  boxes = await mailboxes(w)
  t.match(boxes[busy.id], { running: 1, max_concurrency: 3 }, 'kept, with its limits, while its run is in flight')
  backend.release()
  t.equal(await running, 200, 'the run in flight finished')
  t.ok(await eventually(async () => (await mailboxes(w))[busy.id] === undefined), 'then its mailbox is gone')

  // Served again: configured again from its definition.
  t.equal((await w.api('PUT', `/proxies/${busy.id as string}`, { status: 'published' }, 'admin')).status, 200)
  t.match((await mailboxes(w))[busy.id], { max_concurrency: 3, running: 0 })
})

t.test("a definition changed on instance A re-limits instance B's mailbox, through Redis", async t => {
  const store = await storeConfig(t, 'postgres')
  const shared = { DATABASE_URL: store.DATABASE_URL, DATA_DIR: store.DATA_DIR }
  const keyPrefix = uniquePrefix('mailbox-limits')
  // The store poll is ten minutes: only the broadcast can explain B's change.
  const env = { WORKERS: '1', CACHE_TYPE: 'redis', REDIS_URL: TEST_REDIS_URL, CONFIG_POLL_INTERVAL_MS: '600000' }
  const a = await startService(t, 'postgres', env, { store: shared, keyPrefix })
  const b = await startService(t, 'postgres', env, { store: shared, keyPrefix })
  const backend = await holdingBackend(t)
  const p = await a.proxy('/work')
  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true, workflow: workflow(backend.url, { max_concurrency: 4, max_queue: 7 }) })).status, 200)
  t.ok(await eventually(async () => (await mailboxes(b))[p.id]?.max_concurrency === 4), 'B configured from A\'s save')
  t.match((await mailboxes(b))[p.id], { max_queue: 7 })

  t.equal((await a.api('PUT', `/proxies/${p.id as string}/workflow`, { enabled: true, workflow: workflow(backend.url, { max_concurrency: 1, max_queue: 0 }) })).status, 200)
  t.ok(await eventually(async () => (await mailboxes(b))[p.id]?.max_concurrency === 1), 'B re-limited from A\'s change, before any run on B')
  const first = call(b, p)
  t.ok(await eventually(() => backend.held() === 1))
  t.equal(await call(b, p), 503, "B's mailbox refuses the second run at once")
  backend.release()
  t.equal(await first, 200)

  t.equal((await a.api('DELETE', `/proxies/${p.id as string}`, undefined, 'admin')).status, 204)
  t.ok(await eventually(async () => (await mailboxes(b))[p.id] === undefined), "the deleted proxy's mailbox is gone on B")
})
