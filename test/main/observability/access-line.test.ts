/**
 * The gateway's access line is built by hand for speed: it must be the very line pino writes for
 * `logger.info(fields, 'access')`, whatever the path holds, and follow the log level.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { accessLogger, createLogger, type AccessFields } from '../../../src/main/logger.js'
import { createTempDir } from '../../helpers/db.js'
import { recordingLogger } from '../cache/shared.js'

const flushed = async (logger: ReturnType<typeof createLogger>) => { await new Promise<void>((resolve, reject) => logger.flush(err => { err != null ? reject(err) : resolve() })) }

t.test('the same line as pino writes, for awkward paths too', async t => {
  const file = path.join(await createTempDir(t), 'out.log')
  const logger = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, file)
  const access = accessLogger(logger)
  const cases: AccessFields[] = [
    { request_id: 'req_1', method: 'GET', path: '/open/items/1?q=a', route: 'open items', status: 200, upstream_ms: 0.52, ms: 0.81 },
    { request_id: 'req_2', method: 'POST', path: '/a"quote\\back\nline\u0001é😀\u2028', route: null, status: 404, upstream_ms: undefined, ms: 12 },
    { request_id: 'client-id:x@y', method: 'PATCH', path: '/', route: 'r "q"', status: 502, upstream_ms: 3000.25, ms: 3001.5 }
  ]
  for (const f of cases) { access(f); logger.info(f, 'access') }
  await flushed(logger)
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n')
  t.equal(lines.length, cases.length * 2)
  const noTime = (l: string) => l.replace(/"time":"[^"]+"/, '"time":"T"')
  // Two lines per case (checked above): lines[2 * i + 1] and cases[i] are in range.
  for (let i = 0; i < cases.length; i++) {
    t.equal(noTime(lines[2 * i]!), noTime(lines[2 * i + 1]!), `line ${i + 1} is pino's, byte for byte but the time`)
    const parsed = JSON.parse(lines[2 * i]!)
    t.equal(parsed.path, cases[i]!.path, 'the path reads back as it was')
    t.ok(Math.abs(Date.parse(parsed.time) - Date.now()) < 60_000, 'an ISO time of now')
  }
})

t.test('follows the level, and any other logger gets logger.info', async t => {
  const file = path.join(await createTempDir(t), 'out.log')
  const logger = createLogger({ LOG_LEVEL: 'warn', LOG_FORMAT: 'json' }, file)
  accessLogger(logger)({ request_id: 'r', method: 'GET', path: '/', route: null, status: 200, upstream_ms: 1, ms: 1 })
  logger.warn('marker')
  await flushed(logger)
  t.same(fs.readFileSync(file, 'utf8').trimEnd().split('\n').map(l => JSON.parse(l).msg), ['marker'], 'no access line at warn')

  const { logger: other, lines } = recordingLogger()
  accessLogger(other)({ request_id: 'r', method: 'GET', path: '/x', route: 'x', status: 201, upstream_ms: undefined, ms: 2 })
  await new Promise(resolve => setTimeout(resolve, 50))
  t.match(lines, [{ msg: 'access', request_id: 'r', path: '/x', status: 201 }])
})

t.test('lines gathered in the current turn are written when the process exits', async t => {
  const file = path.join(await createTempDir(t), 'out.log')
  const logger = new URL('../../../dist/src/main/logger.js', import.meta.url).href
  const script = `const { createLogger, accessLogger } = await import(${JSON.stringify(logger)})
const log = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, ${JSON.stringify(file)})
const access = accessLogger(log)
await new Promise(resolve => setTimeout(resolve, 200)) // the file is open
for (let i = 0; i < 500; i++) access({ request_id: 'r' + i, method: 'GET', path: '/p/' + i, route: 'p', status: 200, upstream_ms: 1, ms: 2 })
log.error('last words')
process.exit(3)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' })
  const code = await new Promise(resolve => child.on('exit', resolve))
  t.equal(code, 3)
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n').map(l => JSON.parse(l))
  t.equal(lines.length, 501, 'every line written before exit() is in the file')
  t.same(lines.slice(0, 2).map(l => l.request_id), ['r0', 'r1'], 'in the order written')
  t.equal(lines[500].msg, 'last words')
})

t.test('pretty logs: one line a request, gathered per turn, control characters shown escaped', async t => {
  const file = path.join(await createTempDir(t), 'out.log')
  const logger = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, file)
  const access = accessLogger(logger)
  access({ request_id: 'req_1', method: 'GET', path: '/shop/items/7?q=a', route: '/shop /items/{id}', status: 200, upstream_ms: 1.9, ms: 2.13 })
  access({ request_id: 'x\u001b[2J', method: 'POST', path: '/a b\n\u001b[31mred', route: null, status: 404, upstream_ms: undefined, ms: 12 })
  logger.warn('marker')
  await new Promise(resolve => setTimeout(resolve, 200))
  const text = fs.readFileSync(file, 'utf8')
  t.notOk(text.includes('\u001b'), 'no escape sequence reaches the terminal (and no colour in a file)')
  const lines = text.trimEnd().split('\n')
  t.equal(lines.length, 3, 'one line per access, whatever the path holds')
  const access1 = lines.find(l => l.includes('req_1'))
  t.match(access1, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: access GET \/shop\/items\/7\?q=a 200 2\.13 ms \(backend 1\.9 ms\) route "\/shop \/items\/\{id\}" id req_1$/)
  const access2 = lines.find(l => l.includes('POST'))
  t.equal(access2?.replace(/^\[[^\]]+\] /, ''), 'INFO: access POST "/a b\\n\\u001b[31mred" 404 12 ms id "x\\u001b[2J"')
  t.match(lines.find(l => l.includes('marker')), /WARN.*marker/, 'other lines are pino-pretty\'s, to the same place')

  const quiet = createLogger({ LOG_LEVEL: 'warn', LOG_FORMAT: 'pretty' }, path.join(path.dirname(file), 'quiet.log'))
  accessLogger(quiet)({ request_id: 'r', method: 'GET', path: '/', route: null, status: 200, upstream_ms: 1, ms: 1 })
  quiet.warn('only this')
  await new Promise(resolve => setTimeout(resolve, 200))
  t.same(fs.readFileSync(path.join(path.dirname(file), 'quiet.log'), 'utf8').trimEnd().split('\n').map(l => l.replace(/^\[[^\]]+\] /, '')), ['WARN: only this'], 'no access line at warn')
})
