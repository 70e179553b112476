import path from 'node:path'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { createEmbeddedStore } from './embedded.js'
import { migrate } from './migrate.js'
import { createPostgresStore } from './postgres.js'
import type { Store } from './types.js'

export type { Store, Queryable } from './types.js'

const opening = new Map<string, Promise<Store>>()

/**
 * Starts opening the embedded store in DATA_DIR (its thread loads PostgreSQL's WebAssembly and the
 * data directory, about a second) so that it overlaps the rest of start-up; openStore takes it
 * over. Nothing to do with DATABASE_URL set.
 */
export function preopenStore (config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'> & Partial<Pick<Config, 'EMBEDDED_STORE_OPTIMIZE'>>): void {
  if (config.DATABASE_URL !== '') return
  const dir = path.join(config.DATA_DIR, 'db')
  if (opening.has(dir)) return
  const p = createEmbeddedStore(dir, { optimize: config.EMBEDDED_STORE_OPTIMIZE === 'on' })
  p.catch(() => {}) // reported by openStore, which awaits it
  opening.set(dir, p)
}

/** PostgreSQL when DATABASE_URL is set, else the embedded store in DATA_DIR; migrations applied. */
export async function openStore (config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DB_QUERY_TIMEOUT_MS'> & Partial<Pick<Config, 'EMBEDDED_STORE_OPTIMIZE'>>, logger: Logger): Promise<Store> {
  let store: Store
  if (config.DATABASE_URL !== '') {
    store = createPostgresStore({ url: config.DATABASE_URL, queryTimeoutMs: config.DB_QUERY_TIMEOUT_MS }, logger)
  } else {
    const dir = path.join(config.DATA_DIR, 'db')
    const pre = opening.get(dir)
    opening.delete(dir)
    store = await (pre ?? createEmbeddedStore(dir, { optimize: config.EMBEDDED_STORE_OPTIMIZE === 'on' }))
  }
  try {
    await migrate(store, logger)
  } catch (err) {
    await store.close().catch(() => {})
    throw err
  }
  return store
}
