import type { Collection, Proxy } from '../../common/types.js'
import { toCollection } from './collections.js'
import { toProxy } from './proxies.js'
import { ALL_CHANGED } from './config-apply.js'
import { configVersion } from './rows.js'
import type { Queryable, Store } from './types.js'

export { configVersion }

export interface RoutingSnapshot { collections: Collection[], proxies: Proxy[], version: number }

/** What changed after a version: the changed records as they are now (served ones only) and what else was touched. */
export interface RoutingChanges {
  full: false
  version: number
  /** Collections touched: each is replaced by its row in `collections` (if active) and its proxies in `proxies`. */
  collectionIds: string[]
  /** Proxies touched: each is replaced by its row in `proxies` (if served). */
  proxyIds: string[]
  /** Active collections among collectionIds. */
  collections: Collection[]
  /** Published proxies in active collections, of the touched collections or touched themselves. */
  proxies: Proxy[]
  /** Profiles, clients or policies changed. */
  access: boolean
}

/** More changes than this since the last load: reading everything is cheaper. */
const MAX_DELTA = 1000

/** What the gateway serves: active collections and their published proxies, read consistently. */
export async function loadRoutingSnapshot (store: Store): Promise<RoutingSnapshot> {
  return await store.tx(async (q: Queryable) => {
    // One consistent view of the three reads.
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
    return await snapshot(q, await configVersion(q))
  })
}

async function snapshot (q: Queryable, version: number): Promise<RoutingSnapshot & { full: true }> {
  const c = await q.query("SELECT * FROM collections WHERE status = 'active' ORDER BY seq")
  const p = await q.query(`SELECT p.* FROM proxies p JOIN collections c ON c.id = p.collection_id
    WHERE c.status = 'active' AND p.status = 'published' ORDER BY p.seq`)
  return { full: true, collections: c.rows.map(toCollection), proxies: p.rows.map(toProxy), version }
}

/** The proxies of one collection that the gateway serves (none when the collection is disabled or gone). */
export async function loadServedProxiesOf (store: Store, collectionId: string): Promise<Proxy[]> {
  const { rows } = await store.query(`SELECT p.* FROM proxies p JOIN collections c ON c.id = p.collection_id
    WHERE p.collection_id = $1 AND c.status = 'active' AND p.status = 'published' ORDER BY p.seq`, [collectionId])
  return rows.map(toProxy)
}

/**
 * The changes after version `since` (O(what changed)), or the whole snapshot when `since` is
 * unknown (-1), further behind than the kept change rows, or behind by many changes.
 */
export async function loadRoutingChanges (store: Store, since: number): Promise<(RoutingSnapshot & { full: true }) | RoutingChanges> {
  return await store.tx(async (q: Queryable) => {
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
    const version = await configVersion(q)
    const empty: RoutingChanges = { full: false, version, collectionIds: [], proxyIds: [], collections: [], proxies: [], access: false }
    if (since >= 0 && version === since) return empty
    if (since < 0 || version < since || version - since > MAX_DELTA) return await snapshot(q, version)
    const { rows } = await q.query<{ version: number, kind: string, ref: string }>(
      'SELECT version, kind, ref FROM config_changes WHERE version > $1 AND version <= $2 ORDER BY version', [since, version])
    // Versions are contiguous: a missing row means it was pruned (or predates the change log).
    if (rows.length !== version - since) return await snapshot(q, version)
    const cIds = new Set<string>()
    const pIds = new Set<string>()
    let access = false
    // A configuration file applied (store/config-apply.ts): anything may have changed.
    if (rows.some(r => r.kind === ALL_CHANGED)) return await snapshot(q, version)
    for (const r of rows) {
      if (r.kind === 'collection') cIds.add(r.ref)
      else if (r.kind === 'proxy') pIds.add(r.ref)
      else if (r.kind === 'access') access = true
      // 'credential': nothing served here reads credentials (triggers restart on their own event).
    }
    const collectionIds = [...cIds]
    const proxyIds = [...pIds]
    const c = collectionIds.length === 0
      ? { rows: [] }
      : await q.query("SELECT * FROM collections WHERE status = 'active' AND id = ANY($1::text[]) ORDER BY seq", [collectionIds])
    const p = collectionIds.length === 0 && proxyIds.length === 0
      ? { rows: [] }
      : await q.query(`SELECT p.* FROM proxies p JOIN collections c ON c.id = p.collection_id
        WHERE c.status = 'active' AND p.status = 'published' AND (p.collection_id = ANY($1::text[]) OR p.id = ANY($2::text[])) ORDER BY p.seq`,
      [collectionIds, proxyIds])
    return { ...empty, collectionIds, proxyIds, collections: c.rows.map(toCollection), proxies: p.rows.map(toProxy), access }
  })
}
