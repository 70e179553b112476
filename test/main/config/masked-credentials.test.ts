/**
 * No error or log line shows a URL's password: a bad DATABASE_URL / REDIS_URL stops the start
 * with a line naming the variable but not the password, a start that fails to reach PostgreSQL
 * says so without it, and log lines (message, fields, errors) mask it too.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { maskCredentials } from '../../../src/common/mask-credentials.js'
import { ConfigError, loadConfig } from '../../../src/main/config/config.js'
import { createLogger } from '../../../src/main/logger.js'
import { createTempDir } from '../../helpers/db.js'

const ENTRY = new URL('../../../dist/src/main/index.js', import.meta.url).pathname
const PASSWORD = 'Hunter2-s3cret'

t.test('the masking itself', async t => {
  t.equal(maskCredentials(`postgres://app:${PASSWORD}@db.internal:5432/gw`), 'postgres://app:****@db.internal:5432/gw')
  t.equal(maskCredentials(`redis://:${PASSWORD}@cache:6379/0`), 'redis://:****@cache:6379/0')
  t.equal(maskCredentials(`https://${PASSWORD}@otel.example.com/v1/traces`), 'https://****@otel.example.com/v1/traces', 'a user part alone is often a token')
  t.equal(maskCredentials(`postgres://db/gw?sslmode=require&password=${PASSWORD}`), 'postgres://db/gw?sslmode=require&password=****')
  t.equal(maskCredentials('connect ECONNREFUSED 127.0.0.1:5432'), 'connect ECONNREFUSED 127.0.0.1:5432')
  t.equal(maskCredentials('https://issuer.example.com/.well-known/openid-configuration'), 'https://issuer.example.com/.well-known/openid-configuration')
})

t.test('a configuration error names the variable, not the password', async t => {
  try {
    loadConfig({ DATABASE_URL: `mysql://app:${PASSWORD}@db/gw`, REDIS_URL: `http://:${PASSWORD}@cache:6379`, ASSISTANT_BASE_URL: `ftp://u:${PASSWORD}@x`, SECRETS_KEY: PASSWORD })
    t.fail('accepted')
  } catch (err) {
    t.ok(err instanceof ConfigError)
    const lines = (err as ConfigError).lines
    t.equal(lines.length, 4)
    t.match(lines.find(l => l.startsWith('DATABASE_URL=')), 'DATABASE_URL="mysql://app:****@db/gw" is invalid')
    t.match(lines.find(l => l.startsWith('REDIS_URL=')), 'REDIS_URL="http://:****@cache:6379" is invalid')
    t.match(lines.find(l => l.startsWith('SECRETS_KEY=')), 'SECRETS_KEY=(value not shown) is invalid')
    t.notOk(lines.join('\n').includes(PASSWORD))
  }
})

t.test('the process stops with masked lines (bad value; unreachable database)', async t => {
  const env = { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', PORT: '0', MANAGEMENT_PORT: '0', DATA_DIR: await createTempDir(t) }
  const bad = spawnSync(process.execPath, [ENTRY], { env: { ...env, DATABASE_URL: `mysql://app:${PASSWORD}@127.0.0.1/gw` }, encoding: 'utf8', timeout: 120_000 })
  t.equal(bad.status, 1)
  t.match(bad.stderr, 'configuration error: DATABASE_URL="mysql://app:****@127.0.0.1/gw" is invalid: expected a postgres:// URL')
  t.notOk(bad.stderr.includes(PASSWORD) || bad.stdout.includes(PASSWORD), 'no password on either stream')

  // A well-formed URL nothing answers: the start fails, and says why without the password.
  const down = spawnSync(process.execPath, [ENTRY], { env: { ...env, DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/gw` }, encoding: 'utf8', timeout: 120_000 })
  t.equal(down.status, 1)
  t.match(down.stderr, /could not start/)
  t.notOk(down.stderr.includes(PASSWORD) || down.stdout.includes(PASSWORD), 'no password on either stream')
})

t.test('log lines mask URL credentials in the message, fields and errors', async t => {
  const file = path.join(await createTempDir(t), 'log.json')
  const logger = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, file)
  const url = `redis://:${PASSWORD}@cache:6379`
  logger.warn({ url, attempt: 2 }, `connecting to ${url} failed`)
  logger.error({ err: new Error(`OIDC discovery at https://svc:${PASSWORD}@idp.example.com answered 500`) }, 'auth failed')
  logger.error(new Error(`bad ${url}`))
  await new Promise<void>((resolve, reject) => logger.flush(err => { err != null ? reject(err) : resolve() }))
  const text = readFileSync(file, 'utf8')
  const lines = text.trim().split('\n').map(l => JSON.parse(l))
  t.equal(lines.length, 3)
  t.match(lines[0], { url: 'redis://:****@cache:6379', attempt: 2, msg: 'connecting to redis://:****@cache:6379 failed' })
  t.match(lines[1], { err: { message: 'OIDC discovery at https://svc:****@idp.example.com answered 500' } })
  t.notOk(text.includes(PASSWORD), 'no password in any line')
})
