import t from 'tap'
import { openStore } from '../../../src/main/store/index.js'
import { createCollection, deleteCollection, duplicateCollection, getCollection, listCollections, updateCollection } from '../../../src/main/store/collections.js'
import { createProxy, duplicateProxy, getProxy, listProxies, updateProxy } from '../../../src/main/store/proxies.js'
import { loadRoutingChanges, loadRoutingSnapshot, configVersion } from '../../../src/main/store/routing.js'
import { upstreamForCreate } from '../../../src/main/management/upstream-fields.js'
import { createTestDatabase, openTestStore, silentLogger, storeConfig, STORE_KINDS } from '../../helpers/db.js'

// The store takes the upstream as the management routes build it (upstream_url is their shorthand).
const upstream = upstreamForCreate({ upstream_url: 'http://127.0.0.1:9' })
const coll = (n: number) => ({ name: `c${n}`, base_path: `/c${n}`, upstream })

for (const kind of STORE_KINDS) {
  t.test(`${kind} store`, async t => {
    const store = await openTestStore(t, kind)
    t.equal(store.kind, kind)

    t.test('create, get, page through, update, delete', async t => {
      const made = []
      // Five collections: made[n]! for n < 5.
      for (let i = 0; i < 5; i++) made.push(await createCollection(store, coll(i)))
      t.equal(made[0]!.status, 'active')
      t.equal(made[0]!.auth_required, true)
      t.equal(made[0]!.version, 1)
      t.same((await getCollection(store, made[2]!.id)).base_path, '/c2')
      const p1 = await listCollections(store, { limit: 2 })
      t.same(p1.items.map(c => c.name), ['c0', 'c1'])
      t.type(p1.next_cursor, 'string')
      const p2 = await listCollections(store, { limit: 2, cursor: p1.next_cursor! })
      t.same(p2.items.map(c => c.name), ['c2', 'c3'])
      const p3 = await listCollections(store, { limit: 2, cursor: p2.next_cursor! })
      t.same(p3.items.map(c => c.name), ['c4'])
      t.equal(p3.next_cursor, null)
      const up = await updateCollection(store, made[0]!.id, { name: 'renamed', headers: [{ name: 'x-a', value: '1' }] })
      t.equal(up.version, 2)
      t.same(up.headers, [{ name: 'x-a', value: '1' }])
      await t.rejects(updateCollection(store, made[0]!.id, { name: 'stale' }, 1), { status: 412, code: 'precondition_failed' })
      await t.rejects(updateCollection(store, made[1]!.id, { base_path: '/c2' }), { status: 409, code: 'conflict', message: /already used by collection 'c2'/ })
      await deleteCollection(store, made[4]!.id)
      await t.rejects(getCollection(store, made[4]!.id), { status: 404, code: 'not_found' })
    })

    t.test('duplicate base path is a conflict and changes nothing', async t => {
      const before = await configVersion(store)
      await t.rejects(createCollection(store, { ...coll(0), name: 'again' }), { status: 409, code: 'conflict' })
      t.equal(await configVersion(store), before)
    })

    t.test('proxies: claims, duplicates, cascade, snapshot', async t => {
      const c = await createCollection(store, coll(100))
      const p = await createProxy(store, { collection_id: c.id, name: 'get-user', methods: ['GET'], path: '/users/{id}', target_path: '/u/{id}' })
      t.equal(p.status, 'draft')
      t.type(p.workflow_id, 'string')
      await t.rejects(createProxy(store, { collection_id: c.id, name: 'other', methods: ['GET', 'POST'], path: '/users/{name}', target_path: '/x' }),
        { status: 409, code: 'conflict', message: /already served by proxy 'get-user'/ })
      const post = await createProxy(store, { collection_id: c.id, name: 'post-user', methods: ['POST'], path: '/users/{name}', target_path: '/x' })
      t.ok(post.id)
      const copy = await duplicateProxy(store, p.id, {})
      t.equal(copy.status, 'draft')
      t.equal(copy.path, p.path)
      t.not(copy.workflow_id, p.workflow_id)
      await updateProxy(store, copy.id, { description: 'a copy' })
      await t.rejects(updateProxy(store, copy.id, { status: 'published' }), { status: 409, code: 'conflict' })
      await updateProxy(store, p.id, { status: 'published' })
      let snap = await loadRoutingSnapshot(store)
      t.ok(snap.proxies.some(x => x.id === p.id))
      t.notOk(snap.proxies.some(x => x.id === copy.id))
      await updateCollection(store, c.id, { status: 'disabled' })
      snap = await loadRoutingSnapshot(store)
      t.notOk(snap.proxies.some(x => x.id === p.id), 'a disabled collection serves nothing')
      const dup = await duplicateCollection(store, c.id, {})
      t.equal(dup.collection.base_path, '/c100-copy')
      t.equal(dup.proxies.length, 3)
      t.ok(dup.proxies.every(x => x.status === 'draft'))
      t.equal((await listProxies(store, { limit: 50 }, { collection_id: dup.collection.id })).items.length, 3)
      await deleteCollection(store, c.id)
      await t.rejects(getProxy(store, p.id), { status: 404, code: 'not_found' }, 'deleting a collection deletes its proxies')
    })

    t.test('the changes after a version name what changed; a long gap reads everything', async t => {
      const c = await createCollection(store, coll(300))
      const a = await createProxy(store, { collection_id: c.id, name: 'a', methods: ['GET'], path: '/a', target_path: '/a', status: 'published' })
      const since = await configVersion(store)
      t.same(await loadRoutingChanges(store, since), { full: false, version: since, collectionIds: [], proxyIds: [], collections: [], proxies: [], access: false }, 'nothing changed')
      const b = await createProxy(store, { collection_id: c.id, name: 'b', methods: ['GET'], path: '/b', target_path: '/b', status: 'published' })
      await updateProxy(store, a.id, { status: 'draft' })
      let d = await loadRoutingChanges(store, since)
      if (d.full) throw new Error('expected a delta')
      t.equal(d.version, since + 2)
      t.same(d.proxyIds.sort(), [a.id, b.id].sort())
      t.same(d.proxies.map(p => p.id), [b.id], 'a draft is touched but not served')
      await updateCollection(store, c.id, { status: 'disabled' })
      d = await loadRoutingChanges(store, since + 2)
      if (d.full) throw new Error('expected a delta')
      t.same(d.collectionIds, [c.id])
      t.same(d.collections, [], 'a disabled collection is touched but not served')
      t.same(d.proxies, [])
      t.equal((await loadRoutingChanges(store, -1)).full, true, 'an unknown version reads everything')
      await store.query('DELETE FROM config_changes WHERE version <= $1', [since])
      t.equal((await loadRoutingChanges(store, since - 1)).full, true, 'changes no longer in the change log (pruned) read everything')
      t.equal((await loadRoutingChanges(store, since)).full, false)
    })

    t.test('a failed write inside a transaction leaves nothing', async t => {
      await t.rejects(store.tx(async q => {
        await q.query("INSERT INTO collections (id, name, base_path, upstream_url) VALUES ('tx-1', 'tx', '/tx', 'http://x')")
        throw new Error('boom')
      }), /boom/)
      await t.rejects(getCollection(store, 'tx-1'), { status: 404, code: 'not_found' })
    })
  })
}

t.test('records survive a restart (embedded and PostgreSQL)', async t => {
  for (const kind of STORE_KINDS) {
    const cfg = await storeConfig(t, kind)
    const a = await openStore(cfg, silentLogger)
    const c = await createCollection(a, coll(7))
    await a.close()
    const b = await openStore(cfg, silentLogger)
    t.equal((await getCollection(b, c.id)).base_path, '/c7', kind)
    await b.close()
  }
})

t.test('two instances starting at once on one empty PostgreSQL database both come up', async t => {
  const url = await createTestDatabase(t)
  const cfg = { DATABASE_URL: url, DATA_DIR: '/nonexistent', DB_QUERY_TIMEOUT_MS: 10000 }
  const [a, b] = await Promise.all([openStore(cfg, silentLogger), openStore(cfg, silentLogger)])
  const { rows } = await a.query('SELECT count(*)::int AS n FROM schema_migrations')
  t.ok(rows[0].n >= 1)
  await createCollection(a, coll(1))
  t.equal((await listCollections(b, { limit: 10 })).items.length, 1)
  await Promise.all([a.close(), b.close()])
})

t.test('an unreachable PostgreSQL fails the ping and queries, without crashing', async t => {
  const store = await openTestStore(t, 'postgres')
  const dead = await openStore({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', DATA_DIR: '/x', DB_QUERY_TIMEOUT_MS: 1000 }, silentLogger)
    .catch((err: Error) => err)
  t.ok(dead instanceof Error, 'opening against a closed port reports an error')
  await store.ping()
})
