/**
 * Where the test suite's PostgreSQL and Redis are: TEST_DATABASE_URL and
 * TEST_REDIS_URL when given, else the throwaway servers that tap's `before`
 * script started for this run (scripts/test-servers.mjs), found through the
 * state file named after the tap runner, this process's parent.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

interface State { databaseUrl?: string, redisUrl?: string }

function readState (): State {
  // Same name as scripts/test-servers-state.mjs gives it.
  const file = path.join(os.tmpdir(), `gatehouse-test-services-${process.ppid}.json`)
  try { return JSON.parse(fs.readFileSync(file, 'utf8')) as State } catch { return {} }
}

const given = (v: string | undefined) => v === undefined || v === '' ? undefined : v
const state = readState()
const HOW = 'run the test file through tap (npx tap FILE), which starts throwaway servers, or set TEST_DATABASE_URL and TEST_REDIS_URL'

/** postgres:// URL of a database the tests may create databases from ('' when none is known). */
export const TEST_DATABASE_URL = given(process.env.TEST_DATABASE_URL) ?? state.databaseUrl ?? ''
/** redis:// URL of the tests' Redis ('' when none is known). */
export const TEST_REDIS_URL = given(process.env.TEST_REDIS_URL) ?? state.redisUrl ?? ''

export function requireService (url: string, what: string): string {
  if (url === '') throw new Error(`no ${what} for the tests: ${HOW}`)
  return url
}
