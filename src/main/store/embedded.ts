import { fileURLToPath } from 'node:url'
import fs from 'node:fs'
import { Worker } from 'node:worker_threads'
import type { StoreReply, StoreRequest } from './embedded-thread.js'
import type { Queryable, QueryResult, Store } from './types.js'

// Distributes Omit over the request union (the id is added here).
type Request = StoreRequest extends infer R ? R extends StoreRequest ? Omit<R, 'id'> : never : never

function threadFile (): string {
  // Compiled: dist/src/main/store/embedded-thread.js. From sources (tests), the .ts next to it.
  const js = fileURLToPath(new URL('./embedded-thread.js', import.meta.url))
  return fs.existsSync(js) ? js : js.replace(/\.js$/, '.ts')
}

/**
 * The embedded PostgreSQL-compatible store (PGlite, PostgreSQL in WASM) in a
 * data directory: same schema and SQL as the server, no server needed. PGlite
 * runs in its own worker thread (embedded-thread.ts) so that its work never
 * stalls the gateway; this side only passes messages. PGlite is one
 * connection; its transactions run exclusively.
 *
 * `optimize` (EMBEDDED_STORE_OPTIMIZE=on): see embedded-thread.ts; off by default.
 */
export async function createEmbeddedStore (dataDir: string, options: { optimize?: boolean } = {}): Promise<Store> {
  const worker = new Worker(threadFile(), { workerData: { dataDir, optimize: options.optimize === true } })
  const pending = new Map<number, { resolve: (r: StoreReply) => void, reject: (e: Error) => void }>()
  let nextId = 1
  let closed = false
  let gone: Error | null = null

  // The thread keeps the process alive only while a call waits on it (as a socket would).
  const settle = (id: number) => { pending.delete(id); if (pending.size === 0) worker.unref() }
  const ready = new Promise<void>((resolve, reject) => {
    pending.set(0, { resolve: r => { r.error !== undefined ? reject(toError(r.error)) : resolve() }, reject })
  })
  worker.on('message', (m: StoreReply) => {
    const p = pending.get(m.id)
    if (p === undefined) return
    settle(m.id)
    p.resolve(m)
  })
  const lost = (err: Error) => {
    gone = err
    for (const [id, p] of [...pending]) { settle(id); p.reject(err) }
  }
  worker.on('error', lost)
  worker.on('exit', () => { lost(new Error('the embedded store is closed')) })

  const call = async (req: Request): Promise<Extract<StoreReply, { error?: undefined }>> => {
    if (gone !== null) throw gone
    const id = nextId++
    const reply = new Promise<StoreReply>((resolve, reject) => { pending.set(id, { resolve, reject }) })
    if (pending.size === 1) worker.ref()
    worker.postMessage({ ...req, id })
    const r = await reply
    if (r.error !== undefined) throw toError(r.error)
    return r
  }
  const queryable = (tx?: number): Queryable => ({
    async query<T>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const r = await call({ op: 'query', sql, params, tx })
      return { rows: (r.rows ?? []) as T[], rowCount: r.rowCount ?? 0 }
    },
    async exec (sql: string) { await call({ op: 'exec', sql, tx }) }
  })

  try {
    await ready
  } catch (err) {
    await worker.terminate()
    throw err
  }
  worker.unref()
  const top = queryable()
  return {
    kind: 'embedded',
    query: top.query,
    exec: top.exec,
    async tx (fn) {
      const { id: tx } = await call({ op: 'begin' })
      let result
      try {
        result = await fn(queryable(tx))
      } catch (err) {
        await call({ op: 'rollback', tx }).catch(() => {})
        throw err
      }
      await call({ op: 'commit', tx })
      return result
    },
    async ping () {
      if (closed) throw new Error('the embedded store is closed')
      await call({ op: 'query', sql: 'SELECT 1' })
    },
    async close () {
      if (closed) return
      closed = true
      await call({ op: 'close' }).catch(() => {})
      await worker.terminate()
    }
  }
}

function toError (e: Record<string, unknown> & { message: string }): Error {
  return Object.assign(new Error(e.message), e)
}
