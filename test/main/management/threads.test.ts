import t from 'tap'
import type { Role } from '../../../src/main/auth/roles.js'
import { STORE_KINDS } from '../../helpers/db.js'
import { startManagement, type TestManagement } from '../../helpers/management.js'

const PATHS = ['/api/v1/copilot/thread', '/api/v1/developer-portal/copilot/thread'] as const

/** fetch as a given user (sub), so two users can be told apart. */
function as (m: TestManagement, sub: string, role: 'viewer' | 'editor' | 'admin' = 'viewer') {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { connection: 'close', authorization: `Bearer ${await m.token(role, sub)}`, ...headers }
    if (body !== undefined) h['content-type'] ??= 'application/json'
    const res = await fetch(m.url + path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }
  }
}

for (const kind of STORE_KINDS) {
  t.test(`assistant threads (${kind})`, async t => {
    const m = await startManagement(t, kind)
    const alice = as(m, 'alice')
    const bob = as(m, 'bob', 'admin')

    for (const path of PATHS) {
      t.test(`${path}: save, read, isolate, delete`, async t => {
        let r = await alice('GET', path)
        t.equal(r.status, 200, 'a user without a thread gets an empty one')
        t.match(r.body, { id: null, messages: [], title: null, metadata: {}, version: 0 })
        t.equal(r.headers.get('etag'), '"0"')

        const messages = [
          { role: 'user', content: 'List my collections' },
          { role: 'assistant', content: [{ type: 'text', text: 'Calling a tool' }], tool_calls: [{ id: 'c1', name: 'list_collections' }] },
          { role: 'tool', content: { items: [] }, tool_call_id: 'c1' }
        ]
        r = await alice('PUT', path, { messages, title: 'Collections', metadata: { model: 'x' } }, { 'if-match': '"0"' })
        t.equal(r.status, 200)
        t.match(r.body, { title: 'Collections', messages, metadata: { model: 'x' }, version: 1 })
        t.type(r.body.id, 'string')
        t.equal(r.headers.get('etag'), '"1"')

        r = await alice('GET', path)
        t.same(r.body.messages, messages, 'extra message fields are kept')
        t.equal(r.body.version, 1)

        r = await bob('GET', path)
        t.same(r.body.messages, [], 'another user never sees the thread')
        r = await bob('PUT', path, { messages: [{ role: 'user', content: 'mine' }] })
        t.equal(r.status, 200)
        r = await alice('GET', path)
        t.equal(r.body.messages.length, 3, "another user's save does not touch it")

        r = await alice('PUT', path, { messages: [] }, { 'if-match': '"0"' })
        t.equal(r.status, 412, 'a stale If-Match is refused')
        r = await alice('PUT', path, { messages: [{ role: 'user', content: 'again' }] }, { 'if-match': '"1"' })
        t.equal(r.status, 200)
        t.equal(r.body.version, 2)
        t.equal(r.body.title, null, 'PUT replaces the whole thread')

        r = await alice('DELETE', path)
        t.equal(r.status, 204)
        r = await alice('GET', path)
        t.same(r.body.messages, [])
        r = await alice('DELETE', path)
        t.equal(r.status, 204, 'deleting a missing thread is not an error')
        r = await bob('GET', path)
        t.equal(r.body.messages.length, 1, "deleting one user's thread keeps the other's")
      })
    }

    t.test('the two surfaces are separate threads', async t => {
      const carol = as(m, 'carol')
      await carol('PUT', PATHS[0], { messages: [{ role: 'user', content: 'management' }] })
      const r = await carol('GET', PATHS[1])
      t.same(r.body.messages, [])
    })

    t.test('validation, size bounds and auth', async t => {
      const path = PATHS[0]
      let r = await alice('PUT', path, { messages: [{ role: 7, content: 'x' }] })
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'validation_failed')
      t.match(r.body.error.details[0], { field: 'messages[0].role' })
      r = await alice('PUT', path, { messages: [{ role: 'user' }] })
      t.equal(r.status, 400)
      r = await alice('PUT', path, { messages: [{ role: 'user', content: 1 }] })
      t.equal(r.status, 400)
      r = await alice('PUT', path, { title: 'no messages' })
      t.equal(r.status, 400)
      r = await alice('PUT', path, { messages: [], extra: true })
      t.equal(r.status, 400)
      r = await alice('PUT', path, '{"messages":')
      t.equal(r.status, 400)
      t.equal(r.body.error.code, 'invalid_json')
      r = await alice('PUT', path, 'messages=1', { 'content-type': 'text/plain' })
      t.equal(r.status, 415)

      r = await alice('PUT', path, { messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })) })
      t.equal(r.status, 413)
      t.equal(r.body.error.code, 'payload_too_large')
      t.match(r.body.error.message, /1001 messages; at most 1000/)
      r = await alice('PUT', path, { messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024) }] })
      t.equal(r.status, 413)
      t.match(r.body.error.message, /at most 1048576 bytes/)
      r = await alice('PUT', path, { messages: [{ role: 'user', content: 'x'.repeat(3 * 1024 * 1024) }] })
      t.equal(r.status, 413, 'a body beyond the request limit is refused before parsing')
      r = await alice('GET', path)
      t.same(r.body.messages, [], 'a refused save changes nothing')

      r = await m.call('GET', path, { role: null })
      t.equal(r.status, 401)
      r = await m.call('PUT', path, { role: null, body: { messages: [] } })
      t.equal(r.status, 401)
      r = await m.call('DELETE', path, { role: null })
      t.equal(r.status, 401)
      // A token without a role: the issuer's type requires one, so the missing field is cast in on purpose.
      const noRole = await m.auth.local!.sign({ sub: 'norole' } as { sub: string, role: Role })
      r = await m.call('GET', path, { role: null, headers: { authorization: `Bearer ${noRole}` } })
      t.equal(r.status, 403)
      t.equal(m.events.length, 0, 'threads emit no events')
    })
  })
}
