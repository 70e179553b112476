/**
 * tap's `before` script: unless TEST_DATABASE_URL and TEST_REDIS_URL are both
 * given, starts throwaway PostgreSQL and Redis servers for this tap run
 * (scripts/test-servers.mjs, watching the tap runner) and waits until they
 * answer. The test files find their URLs in a state file keyed by the runner's
 * pid (test/helpers/services.ts); tap's `after` script stops them.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { stateFileFor } from './test-servers-state.mjs'

const wantPostgres = (process.env.TEST_DATABASE_URL ?? '') === ''
const wantRedis = (process.env.TEST_REDIS_URL ?? '') === ''
if (!wantPostgres && !wantRedis) process.exit(0)

const runner = process.ppid
const state = stateFileFor(runner)
fs.rmSync(state, { force: true })
const logFile = `${state}.log`
const out = fs.openSync(logFile, 'w')
const supervisor = spawn(process.execPath, [fileURLToPath(new URL('./test-servers.mjs', import.meta.url)), '--watch', String(runner), '--state', state,
  ...(wantPostgres ? [] : ['--no-postgres']), ...(wantRedis ? [] : ['--no-redis'])], { detached: true, stdio: ['ignore', out, out] })
supervisor.unref()
let exited = false
supervisor.once('exit', () => { exited = true })

const deadline = Date.now() + 90_000
while (!fs.existsSync(state) && !exited && Date.now() < deadline) await sleep(100)
if (!fs.existsSync(state)) {
  process.stderr.write(`test servers did not start:\n${fs.readFileSync(logFile, 'utf8')}\n`)
  if (!exited) supervisor.kill('SIGTERM')
  process.exit(1)
}
