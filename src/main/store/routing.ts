import type { Collection, Proxy } from '../../common/types.js'
import { toCollection } from './collections.js'
import { toProxy } from './proxies.js'
import { configVersion } from './rows.js'
import type { Queryable, Store } from './types.js'

export { configVersion }

export interface RoutingSnapshot { collections: Collection[], proxies: Proxy[], version: number }

/** What the gateway serves: active collections and their published proxies, read consistently. */
export async function loadRoutingSnapshot (store: Store): Promise<RoutingSnapshot> {
  return await store.tx(async (q: Queryable) => {
    // One consistent view of the three reads.
    await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
    const version = await configVersion(q)
    const c = await q.query("SELECT * FROM collections WHERE status = 'active' ORDER BY seq")
    const p = await q.query(`SELECT p.* FROM proxies p JOIN collections c ON c.id = p.collection_id
      WHERE c.status = 'active' AND p.status = 'published' ORDER BY p.seq`)
    return { collections: c.rows.map(toCollection), proxies: p.rows.map(toProxy), version }
  })
}
