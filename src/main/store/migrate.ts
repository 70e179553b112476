import type { Logger } from '../logger.js'
import { MIGRATIONS, type Migration } from './migrations/index.js'
import type { Store } from './types.js'

// Any constant works; it only has to be the same for every instance.
const MIGRATION_LOCK = 7_261_001

/**
 * Applies pending migrations in one transaction holding an advisory lock, so
 * instances started at the same moment against one empty database serialise:
 * the first applies, the others wait and then find nothing to do.
 */
export async function migrate (store: Pick<Store, 'kind' | 'tx'>, logger: Logger, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return await store.tx(async q => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await q.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const { rows } = await q.query<{ version: number }>('SELECT version FROM schema_migrations')
    const done = new Set(rows.map(r => Number(r.version)))
    const applied: number[] = []
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue
      await q.exec(store.kind === 'embedded' && m.embeddedSql !== undefined ? m.embeddedSql : m.sql)
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
      applied.push(m.version)
      logger.info({ version: m.version, name: m.name }, 'applied migration')
    }
    return applied
  })
}
