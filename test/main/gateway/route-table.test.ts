/** Route matching over many collections: longest base path first, fall-through, the most specific 405. */
import t from 'tap'
import { compileRouteTable, type MatchResult, type RouteTable } from '../../../src/main/gateway/route-table.js'
import { collection, proxy } from '../../helpers/gateway.js'

const segs = (path: string) => path.slice(1).split('/')
const proxyOf = (m: MatchResult) => m !== null && 'route' in m ? m.route.proxy.id : m

t.test('collections are found by base path in a trie: longest prefix on a segment boundary, then shorter ones', async t => {
  const root = collection({ base_path: '/' })
  const api = collection({ base_path: '/api' })
  const v2 = collection({ base_path: '/api/v2' })
  const deep = collection({ base_path: '/api/v2/admin/x' })
  const many = Array.from({ length: 1000 }, (_, i) => collection({ base_path: `/svc${i}/v1` }))
  const pRoot = proxy(root, { path: '/health' })
  const pApi = proxy(api, { path: '/{rest}/ping' })
  const pV2 = proxy(v2, { path: '/ping', methods: ['POST'] })
  const pV2Star = proxy(v2, { path: '/files/*' })
  const pDeep = proxy(deep, { path: '/' })
  const pMany = many.map(c => proxy(c, { path: '/items/{id}' }))
  const table = compileRouteTable([root, api, v2, deep, ...many], [pRoot, pApi, pV2, pV2Star, pDeep, ...pMany], {}, () => {})
  t.equal(table.size, 1005)
  t.equal(proxyOf(table.match('GET', segs('/svc777/v1/items/9'))), pMany[777]?.id, 'one of 1,000 collections')
  t.equal(proxyOf(table.match('POST', segs('/api/v2/ping'))), pV2.id, 'the longest base path wins')
  t.equal(proxyOf(table.match('GET', segs('/api/v2/ping'))), pApi.id, 'no GET under /api/v2: /api serves it ({rest} = v2)')
  t.equal(proxyOf(table.match('GET', segs('/api/v2/files/a/b'))), pV2Star.id)
  t.equal(proxyOf(table.match('GET', segs('/api/v2/admin/x'))), pDeep.id)
  t.equal(proxyOf(table.match('GET', segs('/health'))), pRoot.id, 'a collection at / serves what no other does')
  t.same(table.match('DELETE', segs('/api/v2/ping')), { allow: ['POST'] }, '405 from the most specific collection that has the path')
  t.equal(table.match('GET', segs('/svc777/v2/items/9')), null, 'a base path matches whole segments only')
  t.equal(table.match('GET', segs('/apix/ping')), null)
  t.equal(table.match('GET', segs('/svc1/v1')), null, 'a base path alone is not a proxy path')
})

t.test('a change recompiles only what it touched, and updates apply in place', async t => {
  const c = collection({ base_path: '/shop' })
  const a = proxy(c, { path: '/a' })
  const b = proxy(c, { path: '/b' })
  const route = (table: RouteTable, path: string, method = 'GET') => { const m = table.match(method, segs(path)); return m !== null && 'route' in m ? m.route : null }
  const table = compileRouteTable([c], [a, b], {}, () => {}, 1024)
  const firstA = route(table, '/shop/a')
  table.set([{ ...c }], [{ ...a }, { ...b, version: 2, path: '/b2' }])
  t.equal(route(table, '/shop/a'), firstA, 'unchanged: the same compiled route')
  t.equal(route(table, '/shop/b'), null, 'changed: recompiled (its new path serves, the old one does not)')
  t.equal(route(table, '/shop/b2')?.proxy.path, '/b2')
  const b2 = route(table, '/shop/b2')
  const wf = { nodes: [], edges: [] } as any
  table.apply({ proxies: [{ ...a, workflow_enabled: true, workflow: wf }] })
  t.equal(route(table, '/shop/a')?.workflow, wf, 'a workflow switched on without a write (trigger listen) is seen')
  t.equal(route(table, '/shop/b2'), b2, 'the other proxy is untouched')
  table.apply({ collections: [{ ...c, version: 2, headers: [{ name: 'x-a', value: '1' }] }] })
  t.same(route(table, '/shop/b2')?.addHeaders, [['x-a', '1']], 'a collection change recompiles its proxies')
  t.equal(table.size, 2)

  // Two proxies on one path with different methods: removing one leaves the other.
  const get = proxy(c, { path: '/items/{id}', methods: ['GET'] })
  const del = proxy(c, { path: '/items/{id}', methods: ['DELETE'] })
  table.apply({ proxies: [get, del] })
  t.equal(route(table, '/shop/items/1', 'DELETE')?.proxy.id, del.id)
  table.apply({ removedProxies: [del.id] })
  t.same(table.match('DELETE', segs('/shop/items/1')), { allow: ['GET'] }, 'a removed method answers 405 naming what is left')
  t.equal(route(table, '/shop/items/1')?.proxy.id, get.id)
  table.apply({ removedProxies: [get.id] })
  t.equal(table.match('GET', segs('/shop/items/1')), null, 'no route left on the path')

  // A disabled collection takes its proxies with it; back to active, they serve again.
  table.apply({ collections: [{ ...c, version: 3, status: 'disabled' }] })
  t.equal(route(table, '/shop/a'), null)
  t.equal(table.size, 0)
  table.apply({ collections: [{ ...c, version: 4 }] })
  t.equal(route(table, '/shop/a')?.proxy.id, a.id, 'its proxies serve again without being given again')
  t.equal(table.size, 2)

  // A proxy moved to another collection; a draft is not served; a removed collection's base path is free.
  const other = collection({ base_path: '/other' })
  table.apply({ collections: [other], proxies: [{ ...a, collection_id: other.id, version: 5 }] })
  t.equal(route(table, '/shop/a'), null)
  t.equal(route(table, '/other/a')?.proxy.id, a.id)
  table.apply({ proxies: [{ ...a, collection_id: other.id, version: 6, status: 'draft' }] })
  t.equal(route(table, '/other/a'), null, 'a draft is not served')
  table.apply({ removedCollections: [c.id] })
  t.equal(route(table, '/shop/b2'), null)
  t.equal(table.size, 0)
  const again = collection({ base_path: '/shop' })
  table.apply({ collections: [again], proxies: [proxy(again, { path: '/b2' })] })
  t.ok(route(table, '/shop/b2'), 'a new collection on a freed base path serves')
})
