/**
 * The gateway reads every plain backend connection into one reused buffer: what any answer
 * keeps past a read (a head split across reads, a small answer gathered whole, a chunk a slow
 * client cannot take yet) must be a copy. Many answers, sent in odd fragments by a raw backend,
 * interleave here while a slow client holds back a large one; every byte must arrive as sent.
 */
import { createHash } from 'node:crypto'
import net from 'node:net'
import t from 'tap'
import { collection, proxy, startGateway } from '../../helpers/gateway.js'

/** Bytes that differ for every answer and position (a mix-up shows). */
const pattern = (seed: number, n: number): Buffer => {
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 255
  return b
}
const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const pause = async (ms: number) => await new Promise(resolve => setTimeout(resolve, ms))

/** A backend on a raw socket: GET /<framing>/<size>/<seed> answers in small, delayed fragments. */
async function fragmentingBackend (t: { teardown (fn: () => unknown): void }): Promise<number> {
  const server = net.createServer(socket => {
    let pending = Buffer.alloc(0)
    let busy = Promise.resolve()
    socket.on('data', d => {
      pending = Buffer.concat([pending, d])
      for (;;) {
        const end = pending.indexOf('\r\n\r\n')
        if (end < 0) return
        const line = pending.subarray(0, pending.indexOf('\r\n')).toString('latin1')
        pending = pending.subarray(end + 4)
        const [, framing = '', size, seed] = (line.split(' ')[1] ?? '').split('/')
        busy = busy.then(async () => { await answer(socket, framing, Number(size), Number(seed)) })
      }
    })
    socket.on('error', () => {})
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return (server.address() as net.AddressInfo).port
}

async function answer (socket: net.Socket, framing: string, size: number, seed: number): Promise<void> {
  const body = pattern(seed, size)
  const head = framing === 'chunked'
    ? 'HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked\r\nx-seed: ' + seed + '\r\n\r\n'
    : `HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${size}\r\nx-seed: ${seed}\r\n\r\n`
  // The head in three pieces, a turn or a few ms apart: the gateway must keep the first ones.
  const cut1 = 9 + (seed % 7)
  const cut2 = cut1 + 20 + (seed % 5)
  socket.write(head.slice(0, cut1))
  await pause(seed % 3)
  socket.write(head.slice(cut1, cut2))
  await new Promise(resolve => setImmediate(resolve))
  socket.write(head.slice(cut2))
  let off = 0
  let step = 0
  while (off < size) {
    const n = Math.min(size - off, 1 + ((seed * 131 + step * 977) % 9000))
    const piece = body.subarray(off, off + n)
    socket.write(framing === 'chunked' ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece)
    off += n
    step++
    if (step % 4 === 0) await new Promise(resolve => setImmediate(resolve))
  }
  if (framing === 'chunked') socket.write('0\r\n\r\n')
}

t.test('answers in odd fragments, interleaved, arrive byte for byte', async t => {
  const port = await fragmentingBackend(t)
  const { gateway, url } = await startGateway(t)
  const c = collection({ base_path: '/b', upstream_url: `http://127.0.0.1:${port}` })
  gateway.setRoutes([c], [proxy(c, { path: '/*', target_path: '/*' })])

  // A client that asks for a large answer and stops reading after its first bytes: the gateway holds
  // the chunk it could not pass on (its backend paused) while the answers below use the read buffer.
  const SLOW = 16_000_000
  let firstBytes: () => void = () => {}
  const started = new Promise<void>(resolve => { firstBytes = resolve })
  let release: () => void = () => {}
  const released = new Promise<void>(resolve => { release = resolve })
  const slow = new Promise<Buffer>((resolve, reject) => {
    const s = net.connect(Number(new URL(url).port), '127.0.0.1', () => { s.write(`GET /b/length/${SLOW}/99 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`) })
    const parts: Buffer[] = []
    s.on('data', d => {
      if (parts.length === 0) {
        s.pause()
        firstBytes()
        void released.then(() => s.resume())
      }
      parts.push(d)
    })
    s.on('end', () => resolve(Buffer.concat(parts)))
    s.on('error', reject)
  })
  await started
  await pause(300) // the kernel's buffers fill; the gateway is left holding a chunk

  const sizes = [0, 1, 100, 5000, 64 * 1024, 70_000, 300_000]
  const jobs: Array<Promise<void>> = []
  const failures: string[] = []
  for (let i = 0; i < 60; i++) {
    const framing = i % 3 === 0 ? 'chunked' : 'length'
    const size = sizes[i % sizes.length]
    jobs.push((async () => {
      const r = await fetch(`${url}/b/${framing}/${size}/${i}`)
      const got = Buffer.from(await r.arrayBuffer())
      if (r.status !== 200 || r.headers.get('x-seed') !== String(i) || got.length !== size || digest(got) !== digest(pattern(i, size))) {
        failures.push(`${framing} ${size} seed ${i}: status ${r.status}, ${got.length} bytes`)
      }
    })())
  }
  await Promise.all(jobs)
  release()
  const raw = await slow
  const bodyStart = raw.indexOf('\r\n\r\n') + 4
  t.match(raw.subarray(0, bodyStart).toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/)
  const body = raw.subarray(bodyStart)
  t.equal(body.length, SLOW, 'the slow client got the whole answer')
  t.equal(digest(body), digest(pattern(99, SLOW)), 'byte for byte')
  t.same(failures, [], 'every interleaved answer arrived as sent')
})
