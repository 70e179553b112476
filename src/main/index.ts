/**
 * Process entry: read configuration, open the store, start the management and
 * gateway listeners, keep the gateway's route table in step with the store.
 *
 *   env ──> config ──> store (pg | embedded) ──> management listener (node:http)
 *                          │                         │ writes
 *                          └── routing snapshot <────┘ onConfigChange / poll
 *                                   │
 *                                   └──> gateway listener (uWebSockets.js, or node:http/http2 with GATEWAY_SERVER=node)
 */
import { maskCredentials } from '../common/mask-credentials.js'
import { loadConfig, ConfigError, type Config } from './config/config.js'
import { checkRuntime } from './runtime-check.js'

function boot (): Readonly<Config> {
  // uWebSockets.js reads its header limit when it loads (checkRuntime loads it): large JWTs need
  // more than its 4 KiB default.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= '16384'
  let config: Readonly<Config>
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of err.lines) process.stderr.write(`configuration error: ${line}\n`)
      process.exit(1)
    }
    throw err
  }
  // After the configuration: in node mode (GATEWAY_SERVER=node) the uWS binary is never loaded.
  const runtime = checkRuntime(config.GATEWAY_SERVER)
  if (runtime !== null) {
    process.stderr.write(runtime + '\n')
    process.exit(1)
  }
  return config
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(`usage: npm start   (or: gatehouse start)

Starts the gateway (PORT, default 8080) and the management API, console and event stream
(MANAGEMENT_PORT, default 8081). With no DATABASE_URL the store is embedded in DATA_DIR
(./data); CACHE_TYPE=redis with REDIS_URL shares rate limits, events and sessions between
instances. Every setting is an environment variable: see README.md, "Configuration".
`)
  process.exit(0)
}

const config = boot()
// The embedded store's thread starts now, so that its start overlaps loading the service's modules.
const { preopenStore } = await import('./store/index.js')
preopenStore(config)
const { start } = await import('./server.js')
const { createLogger } = await import('./logger.js')
const logger = createLogger(config)
let service: Awaited<ReturnType<typeof start>>
try {
  service = await start(config, { logger })
} catch (err) {
  logger.fatal({ err }, 'Gatehouse could not start')
  logger.flush()
  process.stderr.write(`Gatehouse could not start: ${maskCredentials((err as Error).message)}\n`)
  process.exit(1)
}

let stopping = false
const stop = (signal: string) => {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'shutting down: no new requests; in-flight requests may finish')
  service.close().then(() => { logger.info('stopped'); logger.flush(); process.exit(0) }, err => {
    logger.error({ err }, 'shutdown failed')
    logger.flush()
    process.exit(1)
  })
}
// CONFIG_FILE: SIGHUP reads the file again (without it, SIGHUP keeps its default: the process ends).
if (service.reloadConfigFile !== null) {
  const reloadConfigFile = service.reloadConfigFile
  process.on('SIGHUP', () => { logger.info('SIGHUP: reloading CONFIG_FILE'); void reloadConfigFile() })
}
process.on('SIGTERM', () => stop('SIGTERM'))
process.on('SIGINT', () => stop('SIGINT'))
