/** A whole service (store of the given kind, gateway, management, worker pool) and small API helpers for workflow tests. */
import { loadConfig } from '../../../src/main/config/config.js'
import { start, type Service } from '../../../src/main/server.js'
import type { Logger } from '../../../src/main/logger.js'
import { silentLogger, storeConfig, type StoreKind } from '../../helpers/db.js'
import { retryUntil } from '../../helpers/wait.js'

interface T { teardown (fn: () => unknown): void }

export interface WorkflowService {
  s: Service
  gateway: string
  api (method: string, path: string, body?: unknown, role?: 'viewer' | 'editor' | 'admin'): Promise<{ status: number, body: any, headers: Headers }>
  /** A published proxy under a fresh collection; returns the proxy record. */
  proxy (path: string, methods?: string[]): Promise<any>
  /** Polls a GET until `ok` holds (bounded), for records written off the request path. */
  until (path: string, ok: (body: any) => boolean): Promise<any>
}

let n = 0

export interface ServiceOptions {
  /** Share a database and DATA_DIR with another instance (default: a fresh one of `kind`). */
  store?: { DATABASE_URL: string, DATA_DIR: string }
  /** Redis key prefix shared by the instances of one test. */
  keyPrefix?: string
  /** Where the service logs (default: nowhere). */
  logger?: Logger
}

export async function startService (t: T, kind: StoreKind, env: Record<string, string> = {}, opts: ServiceOptions = {}): Promise<WorkflowService> {
  const store = opts.store ?? await storeConfig(t, kind)
  const config = loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: store.DATABASE_URL, DATA_DIR: store.DATA_DIR, PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0',
    LOG_LEVEL: 'silent', WORKERS: '1', OUTBOUND_ALLOWLIST: '127.0.0.1', ...env
  })
  const s = await start(config, { logger: opts.logger ?? silentLogger, keyPrefix: opts.keyPrefix })
  t.teardown(() => s.close())
  const tokens = new Map<string, string>()
  const m = `http://127.0.0.1:${s.managementPort}/api/v1`
  const api: WorkflowService['api'] = async (method, path, body, role = 'editor') => {
    if (!tokens.has(role)) tokens.set(role, await s.issueToken!(`${role}-user`, role))
    const r = await fetch(m + path, {
      method,
      headers: { authorization: `Bearer ${tokens.get(role)!}`, 'content-type': 'application/json', connection: 'close' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await r.text()
    let parsed: unknown = text
    try { parsed = text === '' ? undefined : JSON.parse(text) } catch {}
    return { status: r.status, body: parsed, headers: r.headers }
  }
  return {
    s,
    gateway: `http://127.0.0.1:${s.gatewayPort}`,
    api,
    async proxy (path, methods = ['POST']) {
      n++
      const c = (await api('POST', '/collections', { name: `c${n}`, base_path: `/c${n}`, upstream_url: 'http://127.0.0.1:9', auth_required: false }, 'admin')).body
      const p = (await api('POST', '/proxies', { collection_id: c.id, name: `p${n}`, methods, path, status: 'published' }, 'admin')).body
      return { ...p, base: `/c${n}` }
    },
    async until (path, ok) {
      const r = await retryUntil(async () => await api('GET', path, undefined, 'viewer'), r => ok(r.body), undefined, 100)
      if (!ok(r.body)) throw new Error(`condition not met for GET ${path}`)
      return r.body
    }
  }
}
