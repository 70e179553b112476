/** Two full service instances sharing one database (and, with CACHE_TYPE=redis, one Redis), for trigger tests. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { storeConfig, type StoreKind } from '../../helpers/db.js'
import { TEST_REDIS_URL } from '../../helpers/services.js'
import { uniquePrefix } from '../cache/shared.js'
import { startService, type WorkflowService } from '../workflows/service.js'

interface T { teardown (fn: () => unknown): void }

export const node = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
export const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })
export const sleep = async (ms: number) => await new Promise(resolve => setTimeout(resolve, ms))

/** Starts instances on one store of `kind` (and one Redis key prefix on the test run's Redis); env applies to all. */
export async function instances (t: T, kind: StoreKind, env: Record<string, string> = {}): Promise<() => Promise<WorkflowService>> {
  const store = await storeConfig(t, kind)
  const keyPrefix = uniquePrefix('triggers')
  return async () => await startService(t, kind, { CONFIG_POLL_INTERVAL_MS: '200', TRIGGER_HEARTBEAT_MS: '500', REDIS_URL: TEST_REDIS_URL, ...env }, { store, keyPrefix })
}

/** A tuple of N instances, so that `const [a, b] = await cluster(t, kind, 2)` gives two. */
type Instances<N extends number, Acc extends WorkflowService[] = []> = Acc['length'] extends N ? Acc : Instances<N, [...Acc, WorkflowService]>

/** `count` instances on one store of `kind`; env applies to all (CACHE_TYPE=redis shares state through Redis). */
export async function cluster<N extends 1 | 2 | 3> (t: T, kind: StoreKind, count: N, env: Record<string, string> = {}): Promise<Instances<N>> {
  const more = await instances(t, kind, env)
  const out: WorkflowService[] = []
  for (let i = 0; i < count; i++) out.push(await more())
  return out as Instances<N> // count of them, pushed above
}

/** A loopback backend answering 200 "backend" to everything; returns its base URL. */
export async function backend (t: T): Promise<string> {
  const server = http.createServer((req, res) => { res.setHeader('connection', 'close'); res.end('backend') })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A published proxy in a fresh collection whose backend is `upstream`. */
export async function publishedProxy (w: WorkflowService, upstream: string, name: string): Promise<any> {
  const c = (await w.api('POST', '/collections', { name, base_path: `/${name}`, upstream_url: upstream, auth_required: false }, 'admin')).body
  const p = (await w.api('POST', '/proxies', { collection_id: c.id, name, methods: ['GET', 'POST'], path: '/run', status: 'published' }, 'admin')).body
  return { ...p, base: `/${name}` }
}

/** Trigger-started execution records of a workflow, oldest first. */
export async function triggerRuns (w: WorkflowService, workflowId: string): Promise<any[]> {
  const r = await w.api('GET', `/workflows/${workflowId}/executions?mode=trigger&limit=500`, undefined, 'viewer')
  if (r.status !== 200) throw new Error(`executions answered ${r.status}`)
  return (r.body.items as any[]).sort((a, b) => String(a.trigger_output.triggered_at ?? a.started_at).localeCompare(String(b.trigger_output.triggered_at ?? b.started_at)))
}
