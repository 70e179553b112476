/** The route reloader against a real store: each reload applies what changed since the last one, and nothing else. */
import t from 'tap'
import { createRouteReloader, type RoutingUpdate } from '../../../src/main/routes/reloader.js'
import { createCollection, deleteCollection, updateCollection } from '../../../src/main/store/collections.js'
import { createProxy, updateProxy } from '../../../src/main/store/proxies.js'
import { policies } from '../../../src/main/store/access.js'
import { upstreamForCreate } from '../../../src/main/management/upstream-fields.js'
import { openTestStore, silentLogger } from '../../helpers/db.js'

const upstream = upstreamForCreate({ upstream_url: 'http://127.0.0.1:9' })

t.test('reloads apply O(changed) deltas, access only when access changed', async t => {
  const store = await openTestStore(t, 'postgres')
  const c1 = await createCollection(store, { name: 'one', base_path: '/one', upstream })
  const c2 = await createCollection(store, { name: 'two', base_path: '/two', upstream })
  const proxies = [] // twenty, made below: proxies[n]! for n < 20
  for (let i = 0; i < 20; i++) {
    proxies.push(await createProxy(store, { collection_id: i % 2 === 0 ? c1.id : c2.id, name: `p${i}`, methods: ['GET'], path: `/p${i}`, target_path: '/x', status: 'published' }))
  }
  const updates: RoutingUpdate[] = []
  let accessLoads = 0
  const r = createRouteReloader({ store, logger: silentLogger, apply: u => { updates.push(u) }, reloadAccess: async () => { accessLoads++ } })

  await r.reload()
  t.equal(updates.length, 1)
  t.equal(updates[0]?.full, true, 'the first load reads everything')
  t.equal(r.view.proxies().length, 20)
  t.equal(accessLoads, 1)

  await r.reload()
  t.equal(updates.length, 1, 'nothing changed: nothing applied')

  await updateProxy(store, proxies[3]!.id, { target_path: '/y' })
  await r.reload()
  let u = updates.at(-1)!
  t.equal(u.full, false)
  t.same(u.delta.proxies.map(p => p.id), [proxies[3]!.id], 'one proxy changed: one proxy applied')
  t.same([u.delta.collections, u.delta.removedCollections, u.delta.removedProxies], [[], [], []])
  t.equal(r.view.proxy(proxies[3]!.id)?.target_path, '/y')
  t.equal(accessLoads, 1, 'access not reloaded for a proxy change')

  await updateProxy(store, proxies[5]!.id, { status: 'draft' })
  await r.reload()
  u = updates.at(-1)!
  t.same(u.delta.removedProxies, [proxies[5]!.id], 'an unpublished proxy is removed')
  t.equal(r.view.proxy(proxies[5]!.id), undefined)

  await updateCollection(store, c2.id, { status: 'disabled' })
  await r.reload()
  u = updates.at(-1)!
  t.same(u.delta.removedCollections, [c2.id])
  t.equal(u.delta.removedProxies.length, 9, "a disabled collection's served proxies go with it")
  t.equal(r.view.proxies().length, 10)

  await updateCollection(store, c2.id, { status: 'active' })
  await r.reload()
  u = updates.at(-1)!
  t.same(u.delta.collections.map(c => c.id), [c2.id])
  t.equal(u.delta.proxies.length, 9, 'and come back with it')
  t.equal(r.view.proxies().length, 19)

  await policies.insert(store, { name: 'p' })
  await r.reload()
  t.equal(accessLoads, 2, 'an access change reloads access')
  t.equal(updates.at(-1), u, 'and applies no route change')

  await deleteCollection(store, c1.id)
  await r.reload()
  u = updates.at(-1)!
  t.same(u.delta.removedCollections, [c1.id])
  t.equal(u.delta.removedProxies.length, 10)
  t.equal(r.view.proxies().length, 9)

  // Further behind than the change log keeps: the whole snapshot, diffed against what is held.
  await updateProxy(store, proxies[1]!.id, { status: 'draft' })
  await store.query('DELETE FROM config_changes')
  await r.reload()
  u = updates.at(-1)!
  t.equal(u.full, true)
  t.same(u.delta.removedProxies, [proxies[1]!.id], 'a full reload still reports what went')
  t.equal(r.view.proxies().length, 8)
})
