/**
 * The management answer to a change goes out before the change's event is fanned out to the
 * event streams, and every stream still gets the event. Told by order, not by time: the
 * subscribers' sockets and the writer's are read by this one process, in the order the kernel
 * made them readable, so the answer arriving before any stream has its frame means the
 * service wrote it first.
 */
import net from 'node:net'
import t from 'tap'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'

const SUBSCRIBERS = 2000

t.test('a write is answered while its event is still being written to 2,000 streams; every stream gets it', async t => {
  const svc = await start(loadConfig({
    GATEWAY_THREADS: '1',
    DATABASE_URL: '', DATA_DIR: await createTempDir(t), PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1',
    SSE_MAX_STREAMS: String(SUBSCRIBERS + 10), SSE_MAX_STREAMS_PER_USER: String(SUBSCRIBERS + 10)
  }), { logger: silentLogger })
  const sockets: net.Socket[] = []
  t.teardown(async () => { for (const s of sockets) s.destroy(); await svc.close() })
  const port = svc.managementPort
  const viewer = await svc.issueToken!('watcher', 'viewer')
  const admin = await svc.issueToken!('ada', 'admin')

  // Raw sockets: a fetch stream per subscriber would cost this process more than the service.
  const marker = '"actor_sub":"ada"'
  let received = 0
  const open = async () => await new Promise<void>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1')
    sockets.push(s)
    let head = true
    let seen = false
    let text = ''
    s.setEncoding('latin1')
    s.on('data', (chunk: string) => {
      text += chunk
      if (head && text.includes('\r\n\r\n')) {
        head = false
        if (!text.startsWith('HTTP/1.1 200')) reject(new Error(text.split('\r\n')[0]))
        else resolve()
      }
      if (!seen && text.includes(marker)) { seen = true; received++ }
    })
    s.on('error', reject)
    s.write(`GET /api/v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${viewer}\r\n\r\n`)
  })
  for (let i = 0; i < SUBSCRIBERS; i += 100) await Promise.all(Array.from({ length: 100 }, open))

  const answer = await new Promise<{ status: number, receivedAtAnswer: number }>((resolve, reject) => {
    const body = JSON.stringify({ name: 'orders', base_path: '/orders', upstream_url: 'http://127.0.0.1:9/' })
    const s = net.connect(port, '127.0.0.1')
    sockets.push(s)
    s.setEncoding('latin1')
    s.once('data', (chunk: string) => resolve({ status: Number(chunk.slice(9, 12)), receivedAtAnswer: received }))
    s.on('error', reject)
    s.write(`POST /api/v1/collections HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${admin}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  })
  t.equal(answer.status, 201, 'the collection was created')
  t.equal(answer.receivedAtAnswer, 0, 'the answer came before any stream had the event')

  // Every stream still gets the event (waited for, not timed: the test's own timeout bounds it).
  while (received < SUBSCRIBERS) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(received, SUBSCRIBERS, 'every stream got the event')
})
