import { execFileSync } from 'node:child_process'
import http from 'node:http'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { defineScript } from '../../../src/main/cache/redis.js'
import { RedisPipe, RedisReplyError, type PipeTarget } from '../../../src/main/cache/redis-pipe.js'
import { REDIS_URL, uniquePrefix } from './shared.js'
import { startRedisServer } from './redis-server.js'

// Commands wait on unref'd sockets and timers: something must keep the test process running.
const keepAlive = setInterval(() => {}, 1000)
t.teardown(() => { clearInterval(keepAlive) })

let tlsPort = 0
t.before(async () => {
  const { freePort } = await import('../../helpers/ports.js')
  tlsPort = await freePort()
})

const ECHO = defineScript('return {tonumber(ARGV[1]), KEYS[1]}')
// A generous deadline where the test is not about the deadline: a loaded machine must not fail it.
const pipeFor = (url: string, deadlineMs = 30_000, retryMs = 100): RedisPipe => {
  const parsed = new Redis(url, { lazyConnect: true })
  const target = parsed.options as PipeTarget
  parsed.disconnect()
  return new RedisPipe(target, { deadlineMs, retryMs })
}
const failure = async (p: Promise<unknown>): Promise<Error> => await p.then(() => { throw new Error('expected a failure') }, (err: Error) => err)

t.test('commands of one turn share a write and each gets its own answer, in order', async t => {
  const pipe = pipeFor(REDIS_URL)
  t.teardown(() => { pipe.close() })
  const prefix = uniquePrefix('pipe')
  const answers = await Promise.all(Array.from({ length: 2000 }, (_, i) => pipe.evalsha(ECHO, [`${prefix}${i}`], [i])))
  t.equal(answers.length, 2000)
  t.ok(answers.every((a, i) => (a as [number, string])[0] === i && (a as [number, string])[1] === `${prefix}${i}`), 'every answer is its own command\'s')
  t.equal(await pipe.ping(), 'PONG')
  // A key and an argument outside ASCII: lengths are counted in bytes.
  t.same(await pipe.evalsha(ECHO, [`${prefix}clé-ключ-鍵`], ['7']), [7, `${prefix}clé-ключ-鍵`])
})

t.test('under a steady flow the queue of answered commands is trimmed, not kept', async t => {
  const pipe = pipeFor(REDIS_URL)
  t.teardown(() => { pipe.close() })
  // A command every turn of the event loop, not waiting for answers (as requests keep arriving):
  // when an answer is read, later commands are already queued, so the queue never runs empty.
  let most = 0
  const answers: Array<Promise<unknown>> = []
  for (let i = 0; i < 30_000; i++) {
    answers.push(pipe.evalsha(ECHO, ['k'], [i]))
    if (i % 3 === 0) await new Promise(resolve => setImmediate(resolve))
    most = Math.max(most, pipe.queued)
  }
  const all = await Promise.all(answers)
  t.ok(all.every((a, i) => (a as number[])[0] === i), 'every answer its own command\'s')
  t.ok(most < 5000, `at most ${most} entries were queued at once for 30,000 commands`)
})

t.test('a script the server does not have is sent with EVAL, and the server keeps it', async t => {
  const pipe = pipeFor(REDIS_URL)
  t.teardown(() => { pipe.close() })
  const fresh = defineScript(`-- ${uniquePrefix('fresh')}\nreturn tonumber(ARGV[1]) * 2`)
  const check = new Redis(REDIS_URL)
  t.teardown(() => { check.disconnect() })
  t.same(await check.script('EXISTS', fresh.sha), [0])
  t.same(await Promise.all([pipe.evalsha(fresh, [], [21]), pipe.evalsha(fresh, [], [4])]), [42, 8])
  t.same(await check.script('EXISTS', fresh.sha), [1])
})

t.test('large answers split across reads, nested arrays, nil and error answers', async t => {
  const pipe = pipeFor(REDIS_URL)
  t.teardown(() => { pipe.close() })
  const big = defineScript("return {string.rep('x', tonumber(ARGV[1])), {1, {'a', 'b'}}, false, 'ok'}")
  const [text, nested, nil, ok] = await pipe.evalsha(big, [], [300_000]) as [string, unknown, unknown, string]
  t.equal(text.length, 300_000)
  t.same(nested, [1, ['a', 'b']])
  t.equal(nil, null)
  t.equal(ok, 'ok')
  const refusing = defineScript("return redis.error_reply('LIMIT refused by the script')")
  const err = await failure(pipe.evalsha(refusing, [], []))
  t.ok(err instanceof RedisReplyError)
  t.equal(err.message, 'LIMIT refused by the script')
  t.same(await pipe.evalsha(ECHO, ['k'], [3]), [3, 'k'], 'the connection goes on after an error answer')
})

t.test('a password, a database number and a unix socket come from the URL as ioredis reads it', async t => {
  const server = await startRedisServer(dir => ['--requirepass', 's3cret', '--unixsocket', path.join(dir, 'redis.sock'), '--unixsocketperm', '700'])
  t.teardown(() => server.close())
  const setter = defineScript("redis.call('SET', KEYS[1], ARGV[1]) return 1")
  const pipe = pipeFor(`redis://:s3cret@127.0.0.1:${server.port}/3`)
  t.teardown(() => { pipe.close() })
  t.equal(await pipe.evalsha(setter, ['where'], ['db3']), 1)
  const db3 = new Redis({ port: server.port, host: '127.0.0.1', password: 's3cret', db: 3 })
  t.teardown(() => { db3.disconnect() })
  t.equal(await db3.get('where'), 'db3', 'written in database 3')

  const viaSocket = new RedisPipe({ path: path.join(server.dir, 'redis.sock'), password: 's3cret' }, { deadlineMs: 30_000 })
  t.teardown(() => { viaSocket.close() })
  t.equal(await viaSocket.ping(), 'PONG', 'through the unix socket')

  const wrong = pipeFor(`redis://:wrong@127.0.0.1:${server.port}`)
  t.teardown(() => { wrong.close() })
  const err = await failure(wrong.evalsha(setter, ['where'], ['x']))
  t.match(err.message, /WRONGPASS|invalid password/, 'a wrong password fails the command with the server\'s reason')
  t.equal(await db3.get('where'), 'db3', 'and writes nothing')
})

t.test('TLS (rediss://) with the connection options ioredis was given', async t => {
  const server = await startRedisServer(dir => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
    return ['--port', '0', '--tls-port', String(tlsPort), '--tls-cert-file', path.join(dir, 'cert.pem'), '--tls-key-file', path.join(dir, 'key.pem'),
      '--tls-ca-cert-file', path.join(dir, 'cert.pem'), '--tls-auth-clients', 'no']
  })
  t.teardown(() => server.close())
  const ca = readFileSync(path.join(server.dir, 'cert.pem'))
  const pipe = new RedisPipe({ host: '127.0.0.1', port: tlsPort, tls: { ca } }, { deadlineMs: 30_000 })
  t.teardown(() => { pipe.close() })
  t.same(await pipe.evalsha(ECHO, ['over-tls'], [5]), [5, 'over-tls'])

  const untrusted = new RedisPipe({ host: '127.0.0.1', port: tlsPort, tls: true }, { deadlineMs: 30_000 })
  t.teardown(() => { untrusted.close() })
  t.match((await failure(untrusted.ping())).message, /self.signed|certificate/, 'a certificate nobody vouches for is refused')
})

/** A private redis-server and a pipe to it that has answered a PING; both gone in teardown. */
async function privateServerPipe (t: Test, deadlineMs: number, retryMs: number) {
  const server = await startRedisServer()
  t.teardown(() => server.close())
  const pipe = pipeFor(server.url, deadlineMs, retryMs)
  t.teardown(() => { pipe.close() })
  t.equal(await pipe.ping(), 'PONG')
  return { server, pipe }
}

t.test('a frozen server: waiting commands fail at the deadline, the next attempt waits retryMs, then it works again', async t => {
  const { server, pipe } = await privateServerPipe(t, 200, 300)
  server.freeze()
  const started = performance.now()
  const errors = await Promise.all(Array.from({ length: 20 }, async () => await failure(pipe.evalsha(ECHO, ['k'], [1]))))
  const waited = performance.now() - started
  t.ok(errors.every(e => /did not answer within 200 ms/.test(e.message)), 'each fails with the deadline')
  t.ok(waited >= 190 && waited < 15_000, `they failed together at the deadline (${Math.round(waited)} ms)`)
  t.match((await failure(pipe.ping())).message, /not connected/, 'right after, a command fails at once: no connection')
  server.thaw()
  await new Promise(resolve => setTimeout(resolve, 320))
  t.same(await pipe.evalsha(ECHO, ['k'], [2]), [2, 'k'], 'after retryMs it connects again; the answers frozen earlier are never taken for new ones')
})

t.test('a server that goes away and comes back', async t => {
  const { server, pipe } = await privateServerPipe(t, 30_000, 200)
  await server.stop()
  t.match((await failure(pipe.ping())).message, /closed|ECONNRESET|EPIPE|not connected/)
  await server.start()
  await new Promise(resolve => setTimeout(resolve, 220))
  t.equal(await pipe.ping(), 'PONG')
  pipe.close()
  t.match((await failure(pipe.ping())).message, /not connected/, 'closed for good')
})

t.test('REDIS_URL pointing at something that is not Redis: commands fail, nothing is thrown at the process', async t => {
  const web = http.createServer((_req, res) => { res.end('not redis') })
  await new Promise<void>(resolve => web.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { web.close(); web.closeAllConnections() })
  const { port } = web.address() as { port: number }
  const pipe = pipeFor(`redis://127.0.0.1:${port}`, 2_000, 100)
  t.teardown(() => { pipe.close() })
  const err = await failure(pipe.evalsha(ECHO, ['k'], [1]))
  t.match(err.message, /unknown reply|closed|did not answer/)
})
