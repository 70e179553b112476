/** The management router: static segments beat parameters whatever the registration order. */
import t from 'tap'
import { Router } from '../../../src/main/management/router.js'

const handler = async () => ({ status: 200 })

t.test('a static segment wins over a parameter, in either registration order', async t => {
  for (const staticFirst of [true, false]) {
    const router = new Router()
    const add = [
      () => router.add('GET', '/api/v1/collections/export', handler),
      () => router.add('GET', '/api/v1/collections/:id', handler)
    ]
    for (const f of staticFirst ? add : add.reverse()) f()
    const found = router.find('GET', '/api/v1/collections/export')
    t.same(found.route.segments, ['api', 'v1', 'collections', 'export'], `static first: ${String(staticFirst)}`)
    t.same(found.params, {})
    const other = router.find('GET', '/api/v1/collections/c1')
    t.same(other.params, { id: 'c1' })
  }
})

t.test('the first differing segment decides between two parameterised routes', async t => {
  const router = new Router()
  router.add('POST', '/api/v1/:kind/:id/rotate', handler)
  router.add('POST', '/api/v1/:kind/bulk/:action', handler)
  router.add('POST', '/api/v1/proxies/:id/:action', handler)
  t.same(router.find('POST', '/api/v1/proxies/bulk/rotate').route.segments, ['api', 'v1', 'proxies', ':id', ':action'])
  t.same(router.find('POST', '/api/v1/clients/bulk/rotate').route.segments, ['api', 'v1', ':kind', 'bulk', ':action'])
  t.same(router.find('POST', '/api/v1/clients/c1/rotate').route.segments, ['api', 'v1', ':kind', ':id', 'rotate'])
})

t.test('the method comes first: a parameter route of the method beats a static route of another', async t => {
  const router = new Router()
  router.add('GET', '/api/v1/collections/export', handler)
  router.add('PUT', '/api/v1/collections/:id', handler)
  const found = router.find('PUT', '/api/v1/collections/export')
  t.same(found.params, { id: 'export' })
  t.same(router.find('HEAD', '/api/v1/collections/export').route.segments, ['api', 'v1', 'collections', 'export'], 'HEAD is served by GET')
})

t.test('404 and 405 as before', async t => {
  const router = new Router()
  router.add('GET', '/api/v1/collections/:id', handler)
  router.add('DELETE', '/api/v1/collections/:id', handler)
  t.throws(() => router.find('POST', '/api/v1/collections/c1'), { status: 405, code: 'method_not_allowed', headers: { allow: 'GET, DELETE' } })
  t.throws(() => router.find('GET', '/api/v1/nothing'), { status: 404, code: 'not_found' })
  t.throws(() => router.find('GET', '/api/v1/collections/%E0%A4%A'), { status: 404, code: 'not_found' }, 'a path that does not decode matches no parameter')
})
