/** A backend header carrying a bare CR, LF or NUL is not relayed (response splitting): the client gets 502. */
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { collection, proxy, startGateway } from '../../helpers/gateway.js'

t.test('a bare CR, LF or NUL in a backend header value gives 502, never a split response', async t => {
  const answers: Record<string, string> = {
    '/cr': 'HTTP/1.1 200 OK\r\nX-A: a\rSet-Cookie: evil=1\r\nContent-Length: 2\r\n\r\nok',
    '/lf': 'HTTP/1.1 200 OK\r\nX-A: a\nSet-Cookie: evil=1\r\nContent-Length: 2\r\n\r\nok',
    '/nul': 'HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 2\r\n\r\nok',
    '/fine': 'HTTP/1.1 200 OK\r\nX-A: a b\r\nContent-Length: 2\r\n\r\nok'
  }
  const backend = net.createServer(s => {
    s.once('data', d => {
      const path = d.toString().split(' ')[1] ?? ''
      s.end(answers[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')
    })
    s.on('error', () => {})
  })
  await new Promise<void>(resolve => backend.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => backend.close(resolve)))
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/b', upstream_url: `http://127.0.0.1:${(backend.address() as AddressInfo).port}` })
  gateway.setRoutes([c], Object.keys(answers).map(p => proxy(c, { path: p, target_path: p })))
  for (const p of ['/cr', '/lf', '/nul']) {
    const r = await fetch(`${url}/b${p}`, { headers: { connection: 'close' } })
    t.equal(r.status, 502, p)
    t.equal(r.headers.get('set-cookie'), null, `${p}: nothing smuggled into the answer`)
    await r.arrayBuffer()
  }
  const r = await fetch(`${url}/b/fine`, { headers: { connection: 'close' } })
  t.equal(r.status, 200)
  t.equal(r.headers.get('x-a'), 'a b')
  t.equal(await r.text(), 'ok')
})
