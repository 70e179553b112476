/**
 * The embedded store's own thread: PGlite (PostgreSQL compiled to WebAssembly)
 * runs here, so its queries (route-table loads, a 10,000
 * proxy snapshot) never block the gateway's event loop. The main thread talks
 * to it through messages (see embedded.ts):
 *
 *   main                                   this thread
 *   {id, op:'query', sql, params, tx?} ──> db.query / tx.query ──> {id, rows, rowCount}
 *   {id, op:'begin'}                   ──> db.transaction(...) waits here until
 *   {id, op:'commit'|'rollback', tx}   ──>   commit resolves it / rollback rejects it
 *   any failure                        <── {id, error: {message, code, ...}}
 *
 * PGlite is one connection: a transaction holds it until its commit or rollback.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import v8 from 'node:v8'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import { EMBEDDED_START_PARAMS, seedFromTemplate } from './embedded-template.js'

export type StoreRequest =
  | { id: number, op: 'query', sql: string, params?: unknown[], tx?: number }
  | { id: number, op: 'exec', sql: string, tx?: number }
  | { id: number, op: 'begin' }
  | { id: number, op: 'commit' | 'rollback', tx: number }
  | { id: number, op: 'close' }

export type StoreReply =
  | { id: number, rows?: unknown[], rowCount?: number, error?: undefined }
  | { id: number, error: Record<string, unknown> & { message: string } }

const port = parentPort!
const ROLLBACK = new Error('rolled back by the caller')
const { dataDir, optimize } = workerData as { dataDir: string, optimize: boolean }

interface OpenTx { q: Transaction, end: (commit: boolean, replyId: number) => void }

async function main (): Promise<void> {
  await fs.mkdir(path.dirname(dataDir), { recursive: true })
  await seedFromTemplate(dataDir)
  await fs.mkdir(dataDir, { recursive: true })
  // PostgreSQL's WebAssembly stays with V8's baseline compiler (Liftoff) unless EMBEDDED_STORE_OPTIMIZE=on.
  // With the optimizing tier (TurboFan) the functions PostgreSQL runs most are compiled again in
  // V8's background threads from the store's first queries on; the compilers' working memory stays
  // in those threads' malloc arenas: 35-80 MB more idle RSS (bench/RESULTS.md, "Idle memory"),
  // for a store that is off the gateway's request path. The flag is the process's: set before this
  // thread compiles the module, it also applies to WebAssembly compiled later (Node's fetch parser).
  v8.setFlagsFromString(optimize ? '--no-liftoff-only' : '--liftoff-only')
  const db = await PGlite.create(dataDir, { startParams: EMBEDDED_START_PARAMS })
  const txs = new Map<number, OpenTx>()
  const reply = (m: StoreReply) => { port.postMessage(m) }
  const fail = (id: number, err: unknown) => { reply({ id, error: plainError(err) }) }
  const target = (tx: number | undefined): PGlite | Transaction => {
    if (tx === undefined) return db
    const open = txs.get(tx)
    if (open === undefined) throw new Error('the transaction is already over')
    return open.q
  }

  port.on('message', (m: StoreRequest) => {
    switch (m.op) {
      case 'query':
        Promise.resolve().then(async () => await target(m.tx).query(m.sql, m.params as any[]))
          .then(r => { reply({ id: m.id, rows: r.rows, rowCount: r.affectedRows ?? r.rows.length }) }, err => { fail(m.id, err) })
        return
      case 'exec':
        Promise.resolve().then(async () => { await target(m.tx).exec(m.sql) }).then(() => { reply({ id: m.id }) }, err => { fail(m.id, err) })
        return
      case 'begin': {
        // The transaction stays open (holding the connection) until commit or rollback arrives.
        let endedBy = 0
        db.transaction(async q => await new Promise<void>((resolve, reject) => {
          txs.set(m.id, { q, end: (commit, replyId) => { endedBy = replyId; commit ? resolve() : reject(ROLLBACK) } })
          reply({ id: m.id })
        })).then(() => { txs.delete(m.id); reply({ id: endedBy }) }, err => {
          txs.delete(m.id)
          if (err === ROLLBACK) reply({ id: endedBy })
          else fail(endedBy !== 0 ? endedBy : m.id, err)
        })
        return
      }
      case 'commit':
      case 'rollback': {
        const open = txs.get(m.tx)
        if (open === undefined) { fail(m.id, new Error('the transaction is already over')); return }
        open.end(m.op === 'commit', m.id)
        return
      }
      case 'close':
        db.close().then(() => { reply({ id: m.id }); port.close() }, err => { fail(m.id, err) })
    }
  })
  port.postMessage({ id: 0 })
}

/** Errors cross the thread as plain objects: structured cloning would drop `code`, `detail`, `constraint`. */
function plainError (err: unknown): Record<string, unknown> & { message: string } {
  if (!(err instanceof Error)) return { message: String(err) }
  const out: Record<string, unknown> & { message: string } = { message: err.message }
  for (const [k, v] of Object.entries(err)) if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v
  return out
}

main().catch(err => { port.postMessage({ id: 0, error: plainError(err) }) })
