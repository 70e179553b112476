import path from 'node:path'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { createEmbeddedStore } from './embedded.js'
import { migrate } from './migrate.js'
import { createPostgresStore } from './postgres.js'
import type { Store } from './types.js'

export type { Store, Queryable } from './types.js'

/** PostgreSQL when DATABASE_URL is set, else the embedded store in DATA_DIR; migrations applied. */
export async function openStore (config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DB_QUERY_TIMEOUT_MS'>, logger: Logger): Promise<Store> {
  const store = config.DATABASE_URL !== ''
    ? createPostgresStore({ url: config.DATABASE_URL, queryTimeoutMs: config.DB_QUERY_TIMEOUT_MS }, logger)
    : await createEmbeddedStore(path.join(config.DATA_DIR, 'db'))
  try {
    await migrate(store, logger)
  } catch (err) {
    await store.close().catch(() => {})
    throw err
  }
  return store
}
