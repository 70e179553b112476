import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { startService } from './service.js'

const n = (id: string, type: string, settings: Record<string, unknown> = {}) => ({ id, name: id, type, settings })
const e = (source: string, target: string) => ({ id: `${source}-${target}`, source, target })

t.test('one worker thread carries several runs that wait on a backend at once', async t => {
  // The backend answers only once AT_ONCE requests are waiting together (or, failing that,
  // answers 503 after a long while): it can only succeed if the runs overlap.
  const AT_ONCE = 4
  const waiting: http.ServerResponse[] = []
  let peak = 0
  const backend = http.createServer((req, res) => {
    waiting.push(res)
    peak = Math.max(peak, waiting.length)
    if (waiting.length >= AT_ONCE) {
      for (const r of waiting.splice(0)) r.writeHead(200, { 'content-type': 'application/json' }).end('{"together":true}')
      return
    }
    const fallback = setTimeout(() => {
      const i = waiting.indexOf(res)
      if (i >= 0) { waiting.splice(i, 1); res.writeHead(503).end('{"together":false}') }
    }, 20_000)
    res.on('close', () => clearTimeout(fallback))
  })
  await new Promise<void>(resolve => backend.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { backend.closeAllConnections(); backend.close() })
  const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}/wait`

  const w = await startService(t, 'embedded', { WORKERS: '1' })
  const p = await w.proxy('/fan', ['GET'])
  const saved = await w.api('PUT', `/proxies/${p.id as string}/workflow`, {
    enabled: true,
    workflow: {
      nodes: [n('trg', 'http_trigger'), n('fetch', 'http_request_node', { method: 'GET', url, timeout_ms: 40_000 }),
        n('reply', 'response_node', { status: 200, body: '{{fetch.response.body}}' })],
      edges: [e('trg', 'fetch'), e('fetch', 'reply')],
      runtime_settings: { timeout_ms: 60_000 }
    }
  })
  t.equal(saved.status, 200)
  const answers = await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    const r = await fetch(`${w.gateway}${p.base as string}/fan`, { headers: { connection: 'close' } })
    return { status: r.status, body: await r.json() }
  }))
  t.same(answers.map(a => a.status), Array(AT_ONCE).fill(200), 'every run got its answer')
  t.same(answers.map(a => a.body), Array(AT_ONCE).fill({ together: true }), 'the backend saw the runs waiting together')
  t.equal(peak, AT_ONCE)
})
