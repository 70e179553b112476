import t from 'tap'
import { startManagement } from '../../helpers/management.js'
import { STORE_KINDS } from '../../helpers/db.js'

for (const kind of STORE_KINDS) {
  t.test(`collection upstream over REST (${kind})`, async t => {
    const m = await startManagement(t, kind)

    t.test('upstream_url is the one-target shorthand; reads carry both', async t => {
      const r = await m.call('POST', '/api/v1/collections', { body: { name: 'one', base_path: '/one', upstream_url: 'http://127.0.0.1:9000/api' } })
      t.equal(r.status, 201)
      t.equal(r.body.upstream_url, 'http://127.0.0.1:9000/api')
      t.same(r.body.upstream.targets, [{ url: 'http://127.0.0.1:9000/api', weight: 100 }])
      t.match(r.body.upstream, { balancing: 'round_robin', hash_on: 'ip', health_checks: { active: null, passive: { consecutive_failures: 5, ejection_ms: 30000, max_ejection_percent: 50 } }, retries: { attempts: 0, budget_percent: 20 }, max_in_flight_per_target: null })
      const got = await m.call('GET', `/api/v1/collections/${r.body.id}`)
      t.same(got.body.upstream, r.body.upstream)
      // A client sending back what it read (both fields, agreeing) changes nothing it did not mean to.
      const back = await m.call('PUT', `/api/v1/collections/${r.body.id}`, { body: { ...got.body, name: 'one again' } })
      t.equal(back.status, 200)
      t.equal(back.body.upstream_url, 'http://127.0.0.1:9000/api')
    })

    t.test('several targets: upstream_url is absent; partial updates keep the rest', async t => {
      let r = await m.call('POST', '/api/v1/collections', {
        body: {
          name: 'many', base_path: '/many',
          upstream: { targets: [{ url: 'http://127.0.0.2:8001', weight: 300 }, { url: 'http://127.0.0.3:8001' }], balancing: 'consistent_hash', hash_on: 'header:x-user', retries: { attempts: 2 } }
        }
      })
      t.equal(r.status, 201)
      const id = r.body.id
      t.notOk('upstream_url' in r.body, 'no shorthand for two targets')
      t.same(r.body.upstream.targets, [{ url: 'http://127.0.0.2:8001', weight: 300 }, { url: 'http://127.0.0.3:8001', weight: 100 }])
      t.match(r.body.upstream, { balancing: 'consistent_hash', hash_on: 'header:x-user', retries: { attempts: 2, budget_percent: 20 } })

      r = await m.call('PUT', `/api/v1/collections/${id}`, { body: { upstream: { health_checks: { active: { path: '/healthz', interval_ms: 500 } }, max_in_flight_per_target: 10 } } })
      t.equal(r.status, 200)
      t.equal(r.body.upstream.targets.length, 2, 'targets kept')
      t.equal(r.body.upstream.balancing, 'consistent_hash', 'balancing kept')
      t.same(r.body.upstream.health_checks.active, { path: '/healthz', interval_ms: 500, timeout_ms: 2000, healthy_threshold: 2, unhealthy_threshold: 3, expected_statuses: [200, 201, 202, 204, 301, 302, 304] })
      t.equal(r.body.upstream.max_in_flight_per_target, 10)

      r = await m.call('PUT', `/api/v1/collections/${id}`, { body: { upstream_url: 'http://127.0.0.4:8001' } })
      t.equal(r.status, 200)
      t.equal(r.body.upstream_url, 'http://127.0.0.4:8001', 'the shorthand replaces the targets')
      t.same(r.body.upstream.targets, [{ url: 'http://127.0.0.4:8001', weight: 100 }])
      t.equal(r.body.upstream.max_in_flight_per_target, 10, 'the other settings stay')

      r = await m.call('PUT', `/api/v1/collections/${id}`, { body: { upstream: { health_checks: { active: null, passive: null } } } })
      t.same(r.body.upstream.health_checks, { active: null, passive: null })
    })

    t.test('validation names each problem', async t => {
      let r = await m.call('POST', '/api/v1/collections', { body: { name: 'none', base_path: '/none' } })
      t.equal(r.status, 400)
      t.match(r.body.error.details, [{ field: 'upstream_url', message: 'is required unless upstream.targets is given' }])
      r = await m.call('POST', '/api/v1/collections', {
        body: { name: 'bad', base_path: '/bad', upstream: { targets: [{ url: 'ftp://x' }, { url: 'http://a:1', weight: 0 }, { url: 'http://a:1' }, { url: 'http://a:1' }], balancing: 'random', hash_on: 'body' } }
      })
      t.equal(r.status, 400)
      const fields = (r.body.error.details as Array<{ field: string }>).map(d => d.field)
      for (const f of ['upstream.targets[0].url', 'upstream.targets[1].weight', 'upstream.targets[3].url', 'upstream.balancing', 'upstream.hash_on']) t.ok(fields.includes(f), `names ${f} (${fields.join(', ')})`)
      r = await m.call('POST', '/api/v1/collections', { body: { name: 'both', base_path: '/both', upstream_url: 'http://a:1', upstream: { targets: [{ url: 'http://b:1' }] } } })
      t.equal(r.status, 400)
      t.match(r.body.error.details, [{ field: 'upstream_url', message: /disagrees/ }])
      r = await m.call('POST', '/api/v1/collections', { body: { name: 'empty', base_path: '/empty', upstream: { targets: [] } } })
      t.equal(r.status, 400)
    })

    t.test('export and import keep the upstream', async t => {
      const list = await m.call('GET', '/api/v1/collections')
      const many = list.body.items.find((c: any) => c.name === 'many')
      await m.call('PUT', `/api/v1/collections/${many.id}`, { body: { upstream: { targets: [{ url: 'http://127.0.0.5:1', weight: 7 }, { url: 'http://127.0.0.6:1' }] } } })
      const file = await m.call('GET', `/api/v1/collections/${many.id}/export`)
      t.equal(file.status, 200)
      file.body.collections[0].collection.base_path = '/many-copy'
      const imp = await m.call('POST', '/api/v1/collections/import', { body: file.body })
      t.equal(imp.status, 201)
      const copy = await m.call('GET', `/api/v1/collections/${imp.body.items[0].id}`)
      t.same(copy.body.upstream.targets, [{ url: 'http://127.0.0.5:1', weight: 7 }, { url: 'http://127.0.0.6:1', weight: 100 }])
      t.equal(copy.body.upstream.max_in_flight_per_target, 10)
    })

    t.test('a proxy relays WebSockets when websocket is true', async t => {
      const c = await m.call('POST', '/api/v1/collections', { body: { name: 'ws', base_path: '/ws', upstream_url: 'http://127.0.0.1:9000' } })
      let r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'chat', methods: ['GET'], path: '/chat', websocket: true } })
      t.equal(r.status, 201)
      t.equal(r.body.websocket, true)
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'plain', methods: ['GET'], path: '/plain' } })
      t.equal(r.body.websocket, false, 'off by default')
      r = await m.call('PUT', `/api/v1/proxies/${r.body.id}`, { body: { websocket: true } })
      t.equal(r.body.websocket, true)
      r = await m.call('POST', '/api/v1/proxies', { body: { collection_id: c.body.id, name: 'bad', methods: ['GET'], path: '/bad', websocket: 'yes' } })
      t.equal(r.status, 400)
    })

    t.test('the OpenAPI document describes upstream', async t => {
      const r = await m.call('GET', '/api/v1/openapi.json')
      const schema = r.body.paths['/api/v1/collections'].post.requestBody.content['application/json'].schema
      t.ok(schema.properties.upstream.properties.targets, 'targets in the create schema')
      t.ok(schema.properties.upstream.properties.health_checks.properties.active, 'health checks too')
    })
  })
}
