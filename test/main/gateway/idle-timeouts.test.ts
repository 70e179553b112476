/**
 * Idle timeouts once a backend has answered its head: a backend that stalls mid-body, and a client
 * that stops reading, no longer hold the client connection and a backend socket forever.
 */
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { collection, proxy, startGateway } from '../../helpers/gateway.js'

async function server (t: { teardown (fn: () => unknown): void }, handler: http.RequestListener) {
  const s = http.createServer(handler)
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { s.closeAllConnections(); s.close() })
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

t.test('a backend that stalls after its head: the client connection is cut after the idle time', async t => {
  let backendClosed = false
  const url = await server(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('first part\n')
    req.socket.on('close', () => { backendClosed = true })
    // ...and nothing more, ever.
  })
  const { gateway, url: gw } = await startGateway(t)
  const c = collection({ base_path: '/slow', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/stall', target_path: '/stall', timeout_ms: 500 })])
  const started = Date.now()
  // identity: a compressible answer of unannounced length is held until it passes COMPRESSION_MIN_BYTES.
  const res = await fetch(`${gw}/slow/stall`, { headers: { 'accept-encoding': 'identity' } })
  t.equal(res.status, 200, 'the head was relayed')
  await t.rejects(res.text(), 'the body never completes: the connection is cut instead of hanging')
  t.ok(Date.now() - started < 20_000, 'well before any client-side timeout')
  for (let i = 0; i < 50 && !backendClosed; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(backendClosed, 'the backend socket is released')
})

t.test('a backend that keeps sending is not cut, however long the answer takes', async t => {
  const url = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    let n = 0
    const tick = setInterval(() => { res.write(`chunk ${n}\n`); if (++n === 8) { clearInterval(tick); res.end('done\n') } }, 200)
  })
  const { gateway, url: gw } = await startGateway(t)
  const c = collection({ base_path: '/drip', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/x', target_path: '/x', timeout_ms: 500 })])
  const text = await (await fetch(`${gw}/drip/x`)).text()
  t.match(text, /chunk 7\ndone/, '1.6 s in all, never idle for 500 ms')
})

t.test('a client that stops reading: the backend socket is released after the idle time', async t => {
  let backendClosed = false
  let sent = 0
  const url = await server(t, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    req.socket.on('close', () => { backendClosed = true })
    const chunk = Buffer.alloc(64 * 1024, 120)
    const pump = () => {
      while (!backendClosed && sent < 256 * 1024 * 1024) {
        sent += chunk.length
        if (!res.write(chunk)) { res.once('drain', pump); return }
      }
    }
    pump()
  })
  const { gateway, port } = await startGateway(t)
  const c = collection({ base_path: '/big', upstream_url: url })
  gateway.setRoutes([c], [proxy(c, { path: '/file', target_path: '/file', timeout_ms: 500 })])
  const client = net.connect(port, '127.0.0.1')
  t.teardown(() => { client.destroy() })
  await new Promise<void>(resolve => client.once('connect', () => resolve()))
  client.write('GET /big/file HTTP/1.1\r\nhost: x\r\n\r\n')
  client.pause() // reads nothing more: buffers fill up, the gateway stops reading the backend
  for (let i = 0; i < 300 && !backendClosed; i++) await new Promise(resolve => setTimeout(resolve, 100))
  t.ok(backendClosed, 'the backend connection was closed rather than held for a client that reads nothing')
  t.ok(sent < 256 * 1024 * 1024, 'long before the whole body')
})
