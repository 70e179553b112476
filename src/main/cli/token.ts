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

const USAGE = `usage: npm run token -- --sub <subject> [--role viewer|editor|admin] [--ttl <seconds>] [--url]
   or: gatehouse token --sub <subject> [--role ...] [--ttl ...] [--url]

Prints a management token signed by the built-in local issuer, whose key is kept in DATA_DIR:
run it with the same DATA_DIR as the server, or the server answers 401 (signed by a key it
does not know). --role defaults to admin, --ttl to 3600 seconds. With --url, prints the web
console's address (MANAGEMENT_HOST, MANAGEMENT_PORT) carrying the token in its fragment.
`

let values: { sub?: string, role?: string, ttl?: string, url?: boolean, help?: boolean }
try {
  values = parseArgs({ options: { sub: { type: 'string' }, role: { type: 'string' }, ttl: { type: 'string' }, url: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }).values
} catch (err) {
  fail(`${(err as Error).message}\n\n${USAGE}`)
}
if (values.help === true) {
  process.stdout.write(USAGE)
  process.exit(0)
}

try {
  const config = loadConfig(process.env)
  if (config.OIDC_ISSUER !== '' || config.OIDC_JWKS_URL !== '') {
    fail('OIDC is configured (OIDC_ISSUER / OIDC_JWKS_URL): get a token from your identity provider instead.')
  }
  const sub = values.sub ?? fail(`--sub is required.\n\n${USAGE}`)
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
