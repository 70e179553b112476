/** Event streams are capped per user and per instance, and a stream ends when the token that opened it expires. */
import t from 'tap'
import { openLocalIssuer } from '../../../src/main/auth/local-issuer.js'
import { loadConfig } from '../../../src/main/config/config.js'
import { start } from '../../../src/main/server.js'
import { createTempDir, silentLogger } from '../../helpers/db.js'
import { retryUntil } from '../../helpers/wait.js'

t.test('caps and token expiry', async t => {
  const dataDir = await createTempDir(t)
  const s = await start(loadConfig({ GATEWAY_THREADS: '1', PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', LOG_LEVEL: 'silent', WORKERS: '1', DATA_DIR: dataDir, DATABASE_URL: '', SSE_MAX_STREAMS: '3', SSE_MAX_STREAMS_PER_USER: '2' }), { logger: silentLogger })
  t.teardown(async () => { await s.close() })
  const url = `http://127.0.0.1:${s.managementPort}/api/v1/events/stream`
  const open: AbortController[] = []
  t.teardown(() => { for (const a of open) a.abort() })
  const connect = async (token: string) => {
    const a = new AbortController()
    open.push(a)
    const r = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: a.signal })
    if (r.status !== 200) return { status: r.status, body: await r.json() as any, headers: r.headers, abort: () => a.abort(), reader: null }
    const reader = r.body!.getReader()
    await reader.read()
    return { status: 200, body: null, headers: r.headers, abort: () => a.abort(), reader }
  }
  const alice = await s.issueToken!('alice', 'viewer')
  const a1 = await connect(alice)
  const a2 = await connect(alice)
  t.equal(a1.status, 200)
  t.equal(a2.status, 200)
  const a3 = await connect(alice)
  t.equal(a3.status, 429, 'a third stream for one user is refused')
  t.match(a3.body, { error: { code: 'rate_limited', message: /SSE_MAX_STREAMS_PER_USER/ } })
  t.ok(a3.headers.get('retry-after'))
  t.equal((await connect(await s.issueToken!('bob', 'viewer'))).status, 200, 'another user may still connect')
  const carol = await connect(await s.issueToken!('carol', 'viewer'))
  t.equal(carol.status, 503, 'the instance cap')
  t.match(carol.body, { error: { code: 'service_unavailable', message: /SSE_MAX_STREAMS/ } })
  a1.abort()
  const again = await retryUntil(async () => await connect(alice), r => r.status === 200)
  t.equal(again.status, 200, 'a closed stream gives its slot back')

  // A 2-second token: its stream ends with token_expired although the client keeps reading.
  const issuer = await openLocalIssuer(dataDir)
  const short = await issuer.sign({ sub: 'dave', role: 'viewer', ttlSeconds: 2 })
  const bobsSlot = open.at(-3)!
  bobsSlot.abort()
  await new Promise(resolve => setTimeout(resolve, 200))
  const d = await connect(short)
  t.equal(d.status, 200)
  let text = ''
  const dec = new TextDecoder()
  for (;;) {
    const { done, value } = await d.reader!.read()
    if (done) break
    text += dec.decode(value)
  }
  t.match(text, /event: token_expired/, 'told why, then the stream ends')
})
