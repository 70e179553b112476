/** Starts a management listener on port 0 over a fresh store, with a recording event sink. */
import { loadConfig } from '../../src/main/config/config.js'
import { createAuth, type Auth } from '../../src/main/auth/verifier.js'
import type { EventInput, EventSink } from '../../src/main/events/types.js'
import { createManagementServer, type ManagementServer } from '../../src/main/management/server.js'
import type { Store } from '../../src/main/store/types.js'
import type { Logger } from '../../src/main/logger.js'
import type { StaticFiles } from '../../src/main/static/static-files.js'
import { openTestStore, silentLogger, createTempDir, type StoreKind } from './db.js'

interface T { teardown (fn: () => unknown): void }

export interface TestManagement {
  url: string
  store: Store
  auth: Auth
  events: EventInput[]
  server: ManagementServer
  configChanges: number
  token (role: 'viewer' | 'editor' | 'admin', sub?: string): Promise<string>
  /** fetch against the listener with a bearer token of the role (default admin); JSON bodies encoded. */
  call (method: string, path: string, opts?: { role?: 'viewer' | 'editor' | 'admin' | null, body?: unknown, headers?: Record<string, string> }): Promise<{ status: number, body: any, headers: Headers }>
}

export async function startManagement (t: T, kind: StoreKind = 'embedded', opts: { logger?: Logger, consoleFiles?: StaticFiles } = {}): Promise<TestManagement> {
  const store = await openTestStore(t, kind)
  const dataDir = await createTempDir(t)
  const config = loadConfig({ MANAGEMENT_PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
  const logger = opts.logger ?? silentLogger
  const auth = await createAuth(config, logger)
  const events: EventInput[] = []
  const sink: EventSink = { publish: e => { events.push(e) } }
  const h = {} as TestManagement
  const server = createManagementServer({
    config, logger, store, auth, events: sink,
    onConfigChange: () => { h.configChanges++ },
    readiness: async () => ({ ok: true, checks: { database: 'ok' } }),
    consoleFiles: opts.consoleFiles
  })
  const { port } = await server.listen()
  t.teardown(async () => { await server.close() })
  const tokens = new Map<string, string>()
  Object.assign(h, {
    url: `http://127.0.0.1:${port}`,
    store, auth, events, server, configChanges: 0,
    async token (role: 'viewer' | 'editor' | 'admin', sub = `${role}-user`) {
      const key = `${role}:${sub}`
      if (!tokens.has(key)) tokens.set(key, await auth.local!.sign({ sub, role }))
      return tokens.get(key)!
    },
    async call (method: string, path: string, opts: { role?: 'viewer' | 'editor' | 'admin' | null, body?: unknown, headers?: Record<string, string> } = {}) {
      const headers: Record<string, string> = { connection: 'close', ...opts.headers }
      const role = opts.role === undefined ? 'admin' : opts.role
      if (role !== null) headers.authorization = `Bearer ${await h.token(role)}`
      let body: string | undefined
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
        headers['content-type'] ??= 'application/json'
      }
      const res = await fetch(h.url + path, { method, headers, body })
      const text = await res.text()
      let parsed: unknown = text
      try { parsed = text === '' ? undefined : JSON.parse(text) } catch {}
      return { status: res.status, body: parsed, headers: res.headers }
    }
  })
  return h
}
