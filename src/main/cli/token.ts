/**
 * `npm run token -- --sub alice --role admin [--ttl 3600]`: prints a management
 * token from the built-in local issuer (the key in DATA_DIR). With `--url`, prints
 * the management console's address carrying the token in its fragment instead.
 */
import { parseArgs } from 'node:util'
import { loadConfig, ConfigError } from '../config/config.js'
import { openLocalIssuer } from '../auth/local-issuer.js'
import { isRole } from '../auth/roles.js'

function fail (message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

/** The fragment never reaches the server nor its logs; the console takes it and clears the address bar. */
function consoleUrl (host: string, port: number, token: string): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host
  return `http://${h}:${port}/#access_token=${token}`
}

try {
  const config = loadConfig(process.env)
  if (config.OIDC_ISSUER !== '' || config.OIDC_JWKS_URL !== '') {
    fail('OIDC is configured (OIDC_ISSUER / OIDC_JWKS_URL): get a token from your identity provider instead.')
  }
  const { values } = parseArgs({ options: { sub: { type: 'string' }, role: { type: 'string' }, ttl: { type: 'string' }, url: { type: 'boolean' } } })
  const sub = values.sub ?? fail('usage: npm run token -- --sub <subject> --role <viewer|editor|admin> [--ttl <seconds>] [--url]')
  const role = values.role ?? 'admin'
  if (!isRole(role)) fail(`--role must be viewer, editor or admin (got '${role}')`)
  const ttl = Number(values.ttl ?? 3600)
  if (!Number.isInteger(ttl) || ttl < 1) fail('--ttl must be a positive number of seconds')
  const issuer = await openLocalIssuer(config.DATA_DIR)
  const token = await issuer.sign({ sub, role, ttlSeconds: ttl })
  process.stdout.write(`${values.url === true ? consoleUrl(config.MANAGEMENT_HOST, config.MANAGEMENT_PORT, token) : token}\n`)
} catch (err) {
  if (err instanceof ConfigError) fail(err.lines.map(l => `configuration error: ${l}`).join('\n'))
  throw err
}
