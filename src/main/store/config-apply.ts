/**
 * The SQL of applying a configuration file (config-file/apply.ts) that the resource
 * repositories do not offer inside a caller's transaction, and the one version an apply leaves:
 *
 *   lockConfigVersion ── every write of the apply (each bumps the version, as any write does)
 *     └─ collapseConfigVersions: the bumps since the lock become ONE version whose change row
 *        is `all`, so every instance reloads once, fully, whatever the file touched.
 */
import { CONFIG_CHANGES_KEPT } from './rows.js'
import type { Queryable } from './types.js'

/** The change kind of an apply: the whole configuration may have changed (store/routing.ts reloads it all). */
export const ALL_CHANGED = 'all'

/**
 * The configuration version, with its row locked until the transaction ends: concurrent applies
 * and writes queue behind it, so the version read here is the one the apply starts from.
 */
export async function lockConfigVersion (q: Queryable): Promise<number> {
  const { rows } = await q.query<{ version: number }>('SELECT version FROM config_state WHERE id = 1 FOR UPDATE')
  return Number(rows[0]?.version ?? 0)
}

/**
 * The version (and change rows) after `from` folded into the single version `from + 1`, which is
 * written even when the writes bumped nothing (a proxy row inserted alone does not).
 */
export async function collapseConfigVersions (q: Queryable, from: number, ref: string): Promise<number> {
  await q.query('DELETE FROM config_changes WHERE version > $1', [from])
  await q.query('UPDATE config_state SET version = $1 WHERE id = 1', [from + 1])
  await q.query('INSERT INTO config_changes (version, kind, ref) VALUES ($1, $2, $3)', [from + 1, ALL_CHANGED, ref])
  if ((from + 1) % 500 === 0) await q.query('DELETE FROM config_changes WHERE version <= $1', [from + 1 - CONFIG_CHANGES_KEPT])
  return from + 1
}

/** Deletes a collection (its proxies and their route claims go by cascade). */
export async function deleteCollectionRow (q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM collections WHERE id = $1', [id])
}

export async function deleteProxyRow (q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM proxies WHERE id = $1', [id])
}
