/**
 * `npm run token -- --sub alice --role admin [--ttl 3600]`: prints a management
 * token from the built-in local issuer (the key in DATA_DIR). With `--url`, prints
 * the management console's address carrying the token in its fragment instead: at
 * `--url-base`, or `--port`, or where the server running with this DATA_DIR said it
 * listens (DATA_DIR/management.json), or else MANAGEMENT_HOST:MANAGEMENT_PORT.
 */
import { parseArgs } from 'node:util'
import { loadConfig, ConfigError } from '../config/config.js'
import { openLocalIssuer } from '../auth/local-issuer.js'
import { isRole } from '../auth/roles.js'
import { readManagementAddress } from '../management/address-file.js'

function fail (message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

/** The fragment never reaches the server nor its logs; the console takes it and clears the address bar. */
function consoleBase (host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host
  return `http://${h}:${port}`
}

const USAGE = `usage: npm run token -- --sub <subject> [--role viewer|editor|admin] [--ttl <seconds>] [--url [--port <n> | --url-base <url>]]
   or: gatehouse token --sub <subject> [--role ...] [--ttl ...] [--url ...]

Prints a management token signed by the built-in local issuer, whose key is kept in DATA_DIR:
run it with the same DATA_DIR as the server, or the server answers 401 (signed by a key it
does not know). --role defaults to admin, --ttl to 3600 seconds. With --url, prints the web
console's address carrying the token in its fragment: at --url-base (e.g. https://gw.example.com)
or on --port when given; otherwise on the port the server running with this DATA_DIR listens on
(it writes DATA_DIR/management.json at start); otherwise MANAGEMENT_HOST:MANAGEMENT_PORT.
`

let values: { sub?: string, role?: string, ttl?: string, url?: boolean, port?: string, 'url-base'?: string, help?: boolean }
try {
  values = parseArgs({ options: { sub: { type: 'string' }, role: { type: 'string' }, ttl: { type: 'string' }, url: { type: 'boolean' }, port: { type: 'string' }, 'url-base': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values
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
  const base = values.url === true || values.port !== undefined || values['url-base'] !== undefined ? linkBase(config) : undefined
  const issuer = await openLocalIssuer(config.DATA_DIR)
  const token = await issuer.sign({ sub, role, ttlSeconds: ttl })
  // The fragment never reaches the server nor its logs; the console takes it and clears the address bar.
  process.stdout.write(`${base !== undefined ? `${base}/#access_token=${token}` : token}\n`)
} catch (err) {
  if (err instanceof ConfigError) fail(err.lines.map(l => `configuration error: ${l}`).join('\n'))
  throw err
}

/** Where the sign-in link points (see USAGE for the order). */
function linkBase (config: { DATA_DIR: string, MANAGEMENT_HOST: string, MANAGEMENT_PORT: number }): string {
  const given = values['url-base']
  if (given !== undefined) {
    let u: URL
    try { u = new URL(given) } catch { fail(`--url-base must be an http:// or https:// URL (got '${given}')`) }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') fail(`--url-base must be an http:// or https:// URL (got '${given}')`)
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}`
  }
  if (values.port !== undefined) {
    const port = Number(values.port)
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`--port must be a port number, 1-65535 (got '${values.port}')`)
    return consoleBase(config.MANAGEMENT_HOST, port)
  }
  const running = readManagementAddress(config.DATA_DIR)
  if (running !== undefined) {
    process.stderr.write(`(the management API of the server running with this DATA_DIR, pid ${running.pid})\n`)
    return running.url
  }
  return consoleBase(config.MANAGEMENT_HOST, config.MANAGEMENT_PORT)
}
