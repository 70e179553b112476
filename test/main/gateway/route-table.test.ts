/** Route matching over many collections: longest base path first, fall-through, the most specific 405. */
import t from 'tap'
import { compileRouteTable, type MatchResult, type RouteCache, type RouteTable } from '../../../src/main/gateway/route-table.js'
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
  t.equal(proxyOf(table.match('GET', segs('/svc777/v1/items/9'))), pMany[777].id, 'one of 1,000 collections')
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

t.test('a rebuild reuses the routes whose proxy and collection did not change, and recompiles the rest', async t => {
  const c = collection({ base_path: '/shop' })
  const a = proxy(c, { path: '/a' })
  const b = proxy(c, { path: '/b' })
  const cache: RouteCache = new Map()
  const route = (table: RouteTable, path: string) => { const m = table.match('GET', segs(path)); return m !== null && 'route' in m ? m.route : null }
  const first = compileRouteTable([c], [a, b], {}, () => {}, 1024, cache)
  const second = compileRouteTable([{ ...c }], [{ ...a }, { ...b, version: 2, path: '/b2' }], {}, () => {}, 1024, cache)
  t.equal(route(second, '/shop/a'), route(first, '/shop/a'), 'unchanged: the same compiled route')
  t.equal(route(second, '/shop/b'), null, 'changed: recompiled (its new path serves, the old one does not)')
  t.equal(route(second, '/shop/b2')?.proxy.path, '/b2')
  const wf = { nodes: [], edges: [] } as any
  const third = compileRouteTable([c], [{ ...a, workflow_enabled: true, workflow: wf }, { ...b, version: 2, path: '/b2' }], {}, () => {}, 1024, cache)
  t.equal(route(third, '/shop/a')?.workflow, wf, 'a workflow switched on without a write (trigger listen) is seen')
  t.equal(route(third, '/shop/b2'), route(second, '/shop/b2'))
  const fourth = compileRouteTable([{ ...c, version: 2, headers: [{ name: 'x-a', value: '1' }] }], [a, { ...b, version: 2, path: '/b2' }], {}, () => {}, 1024, cache)
  t.same(route(fourth, '/shop/b2')?.addHeaders, [['x-a', '1']], 'a collection change recompiles its proxies')
  t.equal(cache.size, 2, 'the cache holds only the current routes')
})
