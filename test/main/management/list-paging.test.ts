/** List paging on every list route, on both stores. */
import t from 'tap'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement } from '../../helpers/management.js'
import { fixtures, UPSTREAM } from './route-matrix.js'

// Proxy lists include drafts for editors and admins only (a viewer sees published proxies).
const reader = (list: string) => list.startsWith('/api/v1/proxies') ? 'editor' as const : 'viewer' as const

for (const kind of STORE_KINDS) {
  t.test(`list paging on every list route (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const f = await fixtures(m)
    for (let i = 0; i < 2; i++) {
      await m.call('POST', '/api/v1/collections', { body: { name: `c${i}`, base_path: `/c${i}`, upstream_url: UPSTREAM } })
      await m.call('POST', '/api/v1/proxies', { body: { collection_id: f.coll.id, name: `p${i}`, methods: ['GET'], path: `/p${i}` } })
      await m.call('POST', '/api/v1/credentials', { body: { name: `b${i}`, type: 'http_bearer', config: { token: 'abcdefghijk' } } })
      await m.call('POST', '/api/v1/policies', { body: { name: `pol${i}` } })
      await m.call('POST', '/api/v1/clients', { body: { name: `cl${i}` } })
      await m.call('POST', `/api/v1/clients/${f.cl.id}/profiles`, { body: { name: `k${i}`, auth_type: 'none' } })
    }
    const lists = ['/api/v1/collections', '/api/v1/proxies', `/api/v1/proxies?collection_id=${f.coll.id}`, '/api/v1/credentials',
      '/api/v1/credentials?type=http_bearer', '/api/v1/policies', '/api/v1/clients', `/api/v1/clients/${f.cl.id}/profiles`]
    for (const list of lists) {
      const q = list.includes('?') ? '&' : '?'
      const all = await m.call('GET', list, { role: reader(list) })
      t.equal(all.status, 200, list)
      t.same(Object.keys(all.body).sort(), ['items', 'next_cursor'], `${list}: {items, next_cursor}`)
      t.equal(all.body.items.length, 3, `${list}: three records`)
      t.equal(all.body.next_cursor, null, `${list}: one page by default (limit 50)`)
      let r = await m.call('GET', `${list}${q}limit=2`, { role: reader(list) })
      t.equal(r.body.items.length, 2, `${list}: limit=2`)
      t.type(r.body.next_cursor, 'string')
      const seen = r.body.items.map((x: any) => x.id)
      r = await m.call('GET', `${list}${q}limit=2&cursor=${encodeURIComponent(r.body.next_cursor)}`, { role: reader(list) })
      t.equal(r.body.items.length, 1, `${list}: the rest on the next page`)
      t.equal(r.body.next_cursor, null, `${list}: next_cursor null at the end`)
      t.same([...seen, r.body.items[0].id], all.body.items.map((x: any) => x.id), `${list}: pages in order, none skipped or repeated`)
      r = await m.call('GET', `${list}${q}limit=3`, { role: reader(list) })
      t.equal(r.body.next_cursor, null, `${list}: a page that ends exactly at the last record has no next cursor`)
      for (const bad of ['limit=501', 'limit=0', 'limit=abc', 'limit=1.5', 'cursor=bogus']) {
        r = await m.call('GET', `${list}${q}${bad}`, { role: reader(list) })
        t.equal(r.status, 400, `${list}: ${bad} is refused`)
        t.match(r.body.error.details, [{ field: bad.split('=')[0] }])
      }
      t.equal((await m.call('GET', `${list}${q}limit=500`, { role: reader(list) })).status, 200, `${list}: limit=500 is allowed`)
      r = await m.call('GET', `${list}${q}sort=name&limit=2`, { role: reader(list) })
      t.equal(r.status, 400, `${list}: an unknown query parameter is refused, not ignored`)
      t.match(r.body.error, { code: 'validation_failed', message: /^Unknown query parameter 'sort' \(it takes limit, cursor/, details: [{ field: 'sort' }] }, `${list}: the answer names it`)
    }
  })
}
