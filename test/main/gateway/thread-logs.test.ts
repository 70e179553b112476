/**
 * `npm start` with two gateway threads and JSON logs on a pipe: every request's access line is
 * written once, whole, whichever thread served it; the worker thread's lines carry `thread`,
 * and those still batched at SIGTERM are written before the process exits.
 */
import { spawn } from 'node:child_process'
import t from 'tap'
import { createTempDir } from '../../helpers/db.js'
import { freePort } from '../../helpers/ports.js'
import { eventually } from '../../helpers/wait.js'

const ENTRY = new URL('../../../dist/src/main/index.js', import.meta.url).pathname

t.setTimeout(300_000)

t.test('access lines of both threads reach the one log, whole and once each', async t => {
  const port = await freePort()
  const env = {
    ...process.env, GATEWAY_SERVER: 'uws', GATEWAY_THREADS: '2', PORT: String(port), HOST: '127.0.0.1', MANAGEMENT_PORT: String(await freePort()),
    DATA_DIR: await createTempDir(t), DATABASE_URL: '', CACHE_TYPE: 'memory', LOG_LEVEL: 'info', LOG_FORMAT: 'json', WORKERS: '1'
  }
  const child = spawn(process.execPath, [ENTRY], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', d => { out += d })
  const exited = new Promise<number | null>(resolve => { child.on('exit', code => { resolve(code) }) })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })

  // Started (the SIGTERM handler is set) once the management listener is announced.
  t.ok(await eventually(() => out.includes('management API listening on')), 'the service starts')
  t.equal((await fetch(`http://127.0.0.1:${port}/livez`, { headers: { connection: 'close' } })).status, 200)
  // One connection per request: the kernel spreads them over both threads.
  const N = 120
  for (let i = 0; i < N; i += 20) {
    await Promise.all(Array.from({ length: 20 }, async (_, k) => {
      const r = await fetch(`http://127.0.0.1:${port}/nowhere/${i + k}`, { headers: { connection: 'close' } })
      await r.arrayBuffer()
    }))
  }
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'a clean exit')

  const lines = out.split('\n').filter(l => l !== '')
  const parsed = lines.map(l => { try { return JSON.parse(l) as Record<string, unknown> } catch { return null } })
  t.same(lines.filter((_, i) => parsed[i] === null), [], 'every line is one whole JSON object')
  const access = parsed.filter(x => x !== null && x.msg === 'access' && String(x.path).startsWith('/nowhere/'))
  const seen = access.map(x => Number(String(x!.path).slice('/nowhere/'.length))).sort((a, b) => a - b)
  t.same(seen, Array.from({ length: N }, (_, i) => i), 'one access line per request')
  t.ok(access.some(x => x!.thread === 1), 'the worker thread\'s lines are there, marked thread 1')
  t.ok(access.some(x => x!.thread === undefined), 'and the main thread\'s')
})
