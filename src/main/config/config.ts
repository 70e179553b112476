/**
 * Configuration: every setting is an environment variable, read once at boot,
 * validated with ajv (defaults and coercion) and frozen. Nothing reads
 * `process.env` after this.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Ajv } from 'ajv'
import { maskCredentials } from '../../common/mask-credentials.js'
import { checkTlsFiles } from './tls-files.js'
import { parseTrustedProxies } from '../../common/cidr.js'

export interface Config {
  PORT: number
  HOST: string
  GATEWAY_SERVER: 'uws' | 'node'
  /** Gateway event loops in this process (uws only: each a uWS app on its own thread, one port). */
  GATEWAY_THREADS: number
  MANAGEMENT_PORT: number
  MANAGEMENT_HOST: string
  MANAGEMENT_MCP_PATH: string
  MCP_SESSION_IDLE_SECONDS: number
  MCP_SESSIONS_PER_USER: number
  MCP_SESSIONS_MAX: number
  QUOTA_FLUSH_MS: number
  MCP_ALLOWED_ORIGINS: string[]
  MCP_ALLOWED_HOSTS: string[]
  ASSISTANT_BASE_URL: string
  ASSISTANT_API_KEY: string
  ASSISTANT_MODEL: string
  ASSISTANT_MAX_STEPS: number
  DATABASE_URL: string
  DATA_DIR: string
  /** A configuration file the service serves (docs/config-as-code.md); empty: configured through the API. */
  CONFIG_FILE: string
  CACHE_TYPE: 'memory' | 'redis'
  REDIS_URL: string
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  LOG_FORMAT: 'auto' | 'json' | 'pretty'
  WORKERS: number
  OUTBOUND_ALLOWLIST: string[]
  TRUSTED_PROXIES: string[]
  OIDC_ISSUER: string
  OIDC_JWKS_URL: string
  OIDC_AUDIENCE: string
  OIDC_ROLES_CLAIM: string
  OIDC_CLIENT_ID: string
  OIDC_MAX_TOKEN_LIFETIME_S: number
  SHUTDOWN_TIMEOUT_MS: number
  UPSTREAM_CONNECT_TIMEOUT_MS: number
  UPSTREAM_TIMEOUT_MS: number
  UPSTREAM_KEEPALIVE: number
  UPSTREAM_DNS_REFRESH_MS: number
  SHED_MAX_IN_FLIGHT: number
  SHED_EVENT_LOOP_DELAY_MS: number
  CONFIG_POLL_INTERVAL_MS: number
  MAX_BODY_BYTES: number
  COMPRESSION: 'on' | 'off'
  COMPRESSION_MIN_BYTES: number
  RESPONSE_CACHE_MAX_BYTES: number
  RESPONSE_CACHE_MAX_ENTRY_BYTES: number
  OPENAPI_IMPORT_MAX_BYTES: number
  OPENAPI_IMPORT_MAX_OPERATIONS: number
  DB_QUERY_TIMEOUT_MS: number
  EMBEDDED_STORE_OPTIMIZE: 'on' | 'off'
  SECRETS_KEY: string
  SSE_PING_INTERVAL_MS: number
  SSE_MAX_STREAMS: number
  SSE_MAX_STREAMS_PER_USER: number
  REQUEST_LOG_RETENTION_HOURS: number
  EXECUTIONS_PER_WORKFLOW: number
  TLS_PORT: number
  TLS_CERT: string
  TLS_KEY: string
  TLS_CA: string
  TRIGGER_HEARTBEAT_MS: number
  OTEL_EXPORTER_OTLP_ENDPOINT: string
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' | 'http/json'
  /** Parsed from `k1=v1,k2=v2` (values percent-decoded). */
  OTEL_EXPORTER_OTLP_HEADERS: Record<string, string>
  OTEL_EXPORTER_OTLP_TIMEOUT: number
  OTEL_SERVICE_NAME: string
  OTEL_TRACES_SAMPLER: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'
  OTEL_TRACES_SAMPLER_ARG: number
  OTEL_BSP_SCHEDULE_DELAY: number
  OTEL_BSP_MAX_QUEUE_SIZE: number
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: number
}

interface VarSpec { type: 'integer' | 'string', default: unknown, enum?: string[], minimum?: number, maximum?: number, pattern?: string, accepts: string }

const VARS: Record<keyof Config, VarSpec> = {
  PORT: { type: 'integer', default: 8080, minimum: 0, maximum: 65535, accepts: 'a port number 0-65535' },
  HOST: { type: 'string', default: '0.0.0.0', accepts: 'a host name or IP address' },
  GATEWAY_THREADS: { type: 'integer', default: autoThreads(), minimum: 1, maximum: 256, accepts: 'an integer 1-256 or auto, one per core (gateway event loops; uws only)' },
  GATEWAY_SERVER: { type: 'string', default: 'uws', enum: ['uws', 'node'], accepts: 'uws (uWebSockets.js, the default) or node (node:http and node:http2)' },
  MANAGEMENT_PORT: { type: 'integer', default: 8081, minimum: 0, maximum: 65535, accepts: 'a port number 0-65535' },
  MANAGEMENT_HOST: { type: 'string', default: '127.0.0.1', accepts: 'a host name or IP address' },
  MANAGEMENT_MCP_PATH: { type: 'string', default: '/mcp', pattern: '^/[A-Za-z0-9_./-]*$', accepts: 'a path starting with /' },
  MCP_SESSION_IDLE_SECONDS: { type: 'integer', default: 1800, minimum: 10, maximum: 604800, accepts: 'seconds 10-604800' },
  MCP_SESSIONS_PER_USER: { type: 'integer', default: 20, minimum: 1, maximum: 10000, accepts: 'an integer 1-10000' },
  MCP_SESSIONS_MAX: { type: 'integer', default: 1000, minimum: 1, maximum: 1000000, accepts: 'an integer 1-1000000' },
  QUOTA_FLUSH_MS: { type: 'integer', default: 1000, minimum: 50, maximum: 60000, accepts: 'milliseconds 50-60000' },
  MCP_ALLOWED_ORIGINS: { type: 'string', default: '', accepts: 'comma-separated origins such as https://console.example.com' },
  MCP_ALLOWED_HOSTS: { type: 'string', default: '', accepts: 'comma-separated host[:port] values' },
  DATABASE_URL: { type: 'string', default: '', pattern: '^(|postgres(ql)?://.+)$', accepts: 'a postgres:// URL, or empty for the embedded store' },
  DATA_DIR: { type: 'string', default: './data', accepts: 'a directory path' },
  CONFIG_FILE: { type: 'string', default: '', accepts: 'the path of a configuration file (YAML or JSON), or empty' },
  CACHE_TYPE: { type: 'string', default: 'memory', enum: ['memory', 'redis'], accepts: 'memory or redis' },
  REDIS_URL: { type: 'string', default: 'redis://127.0.0.1:6379', pattern: '^rediss?://.+', accepts: 'a redis:// URL' },
  LOG_LEVEL: { type: 'string', default: 'info', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], accepts: 'fatal, error, warn, info, debug, trace or silent' },
  LOG_FORMAT: { type: 'string', default: 'auto', enum: ['auto', 'json', 'pretty'], accepts: 'auto (pretty when stdout is a terminal, else JSON), json or pretty' },
  WORKERS: { type: 'integer', default: Math.max(1, os.availableParallelism() - 1), minimum: 1, maximum: 256, accepts: 'an integer 1-256' },
  OUTBOUND_ALLOWLIST: { type: 'string', default: '', accepts: 'comma-separated host names or CIDRs' },
  OIDC_ISSUER: { type: 'string', default: '', pattern: '^(|https?://.+)$', accepts: 'an http(s) issuer URL' },
  OIDC_JWKS_URL: { type: 'string', default: '', pattern: '^(|https?://.+)$', accepts: 'an http(s) JWKS URL' },
  OIDC_AUDIENCE: { type: 'string', default: '', accepts: 'an audience string' },
  OIDC_ROLES_CLAIM: { type: 'string', default: 'roles', pattern: '^.+$', accepts: 'a claim name' },
  OIDC_CLIENT_ID: { type: 'string', default: '', accepts: 'an OIDC client id for the UI' },
  OIDC_MAX_TOKEN_LIFETIME_S: { type: 'integer', default: 86400, minimum: 60, maximum: 31536000, accepts: 'seconds 60-31536000 (longest exp - iat a management token may have)' },
  SHUTDOWN_TIMEOUT_MS: { type: 'integer', default: 10000, minimum: 0, maximum: 600000, accepts: 'milliseconds 0-600000' },
  UPSTREAM_CONNECT_TIMEOUT_MS: { type: 'integer', default: 5000, minimum: 1, maximum: 600000, accepts: 'milliseconds 1-600000' },
  UPSTREAM_TIMEOUT_MS: { type: 'integer', default: 30000, minimum: 1, maximum: 3600000, accepts: 'milliseconds 1-3600000' },
  SHED_MAX_IN_FLIGHT: { type: 'integer', default: 4096, minimum: 0, maximum: 10000000, accepts: 'gateway requests in flight before new ones get 503, 0 (no limit) to 10000000' },
  SHED_EVENT_LOOP_DELAY_MS: { type: 'integer', default: 250, minimum: 0, maximum: 60000, accepts: 'event-loop delay (median over 0.5 s) past which new gateway requests get 503, 0 (off) to 60000 ms' },
  UPSTREAM_KEEPALIVE: { type: 'integer', default: 128, minimum: 0, maximum: 100000, accepts: 'idle connections kept per backend, 0-100000' },
  UPSTREAM_DNS_REFRESH_MS: { type: 'integer', default: 30000, minimum: 100, maximum: 86400000, accepts: 'milliseconds between lookups of upstream target host names, 100-86400000' },
  CONFIG_POLL_INTERVAL_MS: { type: 'integer', default: 1000, minimum: 50, maximum: 600000, accepts: 'milliseconds 50-600000' },
  MAX_BODY_BYTES: { type: 'integer', default: 1048576, minimum: 1, maximum: 1073741824, accepts: 'bytes 1-1073741824' },
  COMPRESSION: { type: 'string', default: 'on', enum: ['on', 'off'], accepts: 'on (gzip or Brotli when the client accepts it) or off' },
  RESPONSE_CACHE_MAX_BYTES: { type: 'integer', default: 67108864, minimum: 0, maximum: 68719476736, accepts: 'bytes 0-68719476736 the response cache may hold in memory (CACHE_TYPE=memory; least recently used entries go first)' },
  RESPONSE_CACHE_MAX_ENTRY_BYTES: { type: 'integer', default: 1048576, minimum: 0, maximum: 536870912, accepts: 'bytes 0-536870912: larger answers are not cached' },
  COMPRESSION_MIN_BYTES: { type: 'integer', default: 1024, minimum: 0, maximum: 1073741824, accepts: 'bytes 0-1073741824 (smaller answers are sent uncompressed)' },
  OPENAPI_IMPORT_MAX_BYTES: { type: 'integer', default: 67108864, minimum: 1024, maximum: 1073741824, accepts: 'bytes of an OpenAPI document to import, 1024-1073741824' },
  OPENAPI_IMPORT_MAX_OPERATIONS: { type: 'integer', default: 5000, minimum: 1, maximum: 100000, accepts: 'operations of an OpenAPI document to import, 1-100000' },
  DB_QUERY_TIMEOUT_MS: { type: 'integer', default: 10000, minimum: 100, maximum: 600000, accepts: 'milliseconds 100-600000' },
  EMBEDDED_STORE_OPTIMIZE: { type: 'string', default: 'off', enum: ['on', 'off'], accepts: 'off (the embedded store\'s WebAssembly runs baseline-compiled, the default) or on (also optimized: faster queries, more memory)' },
  SECRETS_KEY: { type: 'string', default: '', pattern: '^(|[A-Za-z0-9+/]{43}=)$', accepts: 'base64 of 32 bytes, or empty for a key file in DATA_DIR' },
  SSE_PING_INTERVAL_MS: { type: 'integer', default: 15000, minimum: 100, maximum: 3600000, accepts: 'milliseconds 100-3600000' },
  SSE_MAX_STREAMS: { type: 'integer', default: 10000, minimum: 1, maximum: 1000000, accepts: 'open event streams per instance, 1-1000000' },
  SSE_MAX_STREAMS_PER_USER: { type: 'integer', default: 20, minimum: 1, maximum: 100000, accepts: 'open event streams per user (OIDC sub) per instance, 1-100000' },
  REQUEST_LOG_RETENTION_HOURS: { type: 'integer', default: 72, minimum: 0, maximum: 87600, accepts: 'hours 0-87600 (0 keeps no request log)' },
  EXECUTIONS_PER_WORKFLOW: { type: 'integer', default: 200, minimum: 0, maximum: 100000, accepts: 'execution records kept per workflow, 0-100000 (0 keeps none)' },
  TLS_PORT: { type: 'integer', default: 8443, minimum: 0, maximum: 65535, accepts: 'a port number 0-65535' },
  TLS_CERT: { type: 'string', default: '', accepts: 'a readable PEM certificate file (with TLS_KEY)' },
  TLS_KEY: { type: 'string', default: '', accepts: 'a readable PEM private key file (with TLS_CERT)' },
  TLS_CA: { type: 'string', default: '', accepts: 'a readable PEM file of CA certificates (with TLS_CERT and TLS_KEY)' },
  TRUSTED_PROXIES: { type: 'string', default: '', accepts: 'comma-separated IP addresses or CIDRs of the proxies in front of the gateway, such as 10.0.0.0/8,::1' },
  ASSISTANT_BASE_URL: { type: 'string', default: '', pattern: '^(|https?://.+)$', accepts: 'an http(s) URL of an OpenAI-compatible API, such as https://api.openai.com/v1' },
  ASSISTANT_API_KEY: { type: 'string', default: '', accepts: 'the API key sent as Authorization: Bearer to ASSISTANT_BASE_URL' },
  ASSISTANT_MODEL: { type: 'string', default: '', accepts: 'a model name of that API' },
  ASSISTANT_MAX_STEPS: { type: 'integer', default: 8, minimum: 1, maximum: 50, accepts: 'model calls per assistant turn, 1-50' },
  TRIGGER_HEARTBEAT_MS: { type: 'integer', default: 5000, minimum: 100, maximum: 600000, accepts: 'milliseconds 100-600000 (a trigger silent for 6 beats is restarted)' },
  // OpenTelemetry's own names and defaults (docs/observability.md); no endpoint: no tracing.
  OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'string', default: '', pattern: '^(|https?://.+)$', accepts: 'an http(s) base URL of an OTLP/HTTP collector (traces go to /v1/traces), or empty for no tracing' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { type: 'string', default: '', pattern: '^(|https?://.+)$', accepts: 'the full http(s) URL traces are posted to, or empty' },
  OTEL_EXPORTER_OTLP_PROTOCOL: { type: 'string', default: 'http/protobuf', enum: ['http/protobuf', 'http/json'], accepts: 'http/protobuf or http/json' },
  OTEL_EXPORTER_OTLP_HEADERS: { type: 'string', default: '', pattern: '^(|[^=,]+=[^,]*(,[^=,]+=[^,]*)*)$', accepts: 'comma-separated name=value pairs (values percent-encoded)' },
  OTEL_EXPORTER_OTLP_TIMEOUT: { type: 'integer', default: 10000, minimum: 1, maximum: 600000, accepts: 'milliseconds 1-600000 for one export' },
  OTEL_SERVICE_NAME: { type: 'string', default: 'gatehouse', pattern: '^.+$', accepts: 'a service name' },
  OTEL_TRACES_SAMPLER: { type: 'string', default: 'parentbased_traceidratio', enum: ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'], accepts: 'always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio' },
  OTEL_TRACES_SAMPLER_ARG: { type: 'string', default: '1.0', pattern: '^(0|1|0?\\.[0-9]+|1\\.0*)$', accepts: 'a ratio from 0 to 1, such as 0.01' },
  OTEL_BSP_SCHEDULE_DELAY: { type: 'integer', default: 5000, minimum: 1, maximum: 600000, accepts: 'milliseconds 1-600000 between exports' },
  OTEL_BSP_MAX_QUEUE_SIZE: { type: 'integer', default: 2048, minimum: 1, maximum: 1000000, accepts: 'spans kept waiting for export, 1-1000000 (more are dropped and counted)' },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { type: 'integer', default: 512, minimum: 1, maximum: 100000, accepts: 'spans per export request, 1-100000' }
}

/**
 * GATEWAY_THREADS=auto: the cores this process may use (its CPU affinity), capped by a cgroup CPU
 * limit (a container's `--cpus`, Kubernetes' `limits.cpu`), rounded down, at least 1, at most 256.
 * Node 20's os.availableParallelism() sees the affinity only (libuv reads the quota from 1.49, Node 22).
 */
export function autoThreads (cgroupRoot = '/sys/fs/cgroup'): number {
  const limit = cgroupCpuLimit(cgroupRoot)
  return Math.max(1, Math.min(256, os.availableParallelism(), limit === null ? Infinity : Math.floor(limit)))
}

/** The CPU limit of this process's cgroup in cores (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), or null when none is set. */
function cgroupCpuLimit (root: string): number | null {
  const read = (file: string): string | null => { try { return fs.readFileSync(path.join(root, file), 'utf8').trim() } catch { return null } }
  const v2 = read('cpu.max')
  if (v2 !== null) {
    const [quota, period] = v2.split(/\s+/)
    return quota === 'max' || quota === undefined ? null : ratio(Number(quota), Number(period ?? 100000))
  }
  for (const dir of ['cpu', 'cpu,cpuacct']) {
    const quota = read(path.join(dir, 'cpu.cfs_quota_us'))
    if (quota !== null) return ratio(Number(quota), Number(read(path.join(dir, 'cpu.cfs_period_us'))))
  }
  return null
}

function ratio (quota: number, period: number): number | null { return quota > 0 && period > 0 ? quota / period : null }

/** Gateway event loops this configuration runs: GATEWAY_THREADS with uws; node:http servers cannot share a port across threads. */
export function gatewayThreadCount (config: Partial<Pick<Config, 'GATEWAY_THREADS' | 'GATEWAY_SERVER'>>): number {
  return config.GATEWAY_SERVER === 'node' ? 1 : config.GATEWAY_THREADS ?? 1
}

export class ConfigError extends Error {
  readonly lines: string[]
  constructor (lines: string[]) {
    super(lines.join('\n'))
    this.lines = lines
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true })
const validate = ajv.compile({
  type: 'object',
  properties: Object.fromEntries(Object.entries(VARS).map(([k, v]) => {
    const { accepts: _accepts, ...schema } = v
    return [k, schema]
  }))
})

// Variables whose whole value is a secret: an error names them without their value.
const SECRET_VARS = new Set(['SECRETS_KEY', 'ASSISTANT_API_KEY', 'OTEL_EXPORTER_OTLP_HEADERS'])

/** A bad value as an error line shows it: quoted, with a URL's credentials masked, a secret not at all. */
function shown (name: string, value: string | undefined): string {
  if (SECRET_VARS.has(name) && value !== undefined && value !== '') return '(value not shown)'
  return maskCredentials(JSON.stringify(value) ?? 'undefined')
}

/** Reads and validates the environment; throws ConfigError listing every bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(VARS)) {
    const v = env[key]
    if (v !== undefined && v !== '') raw[key] = v.trim()
  }
  // `auto` (the default) as nginx's worker_processes auto: one gateway event loop per core this
  // process may use. GATEWAY_SERVER=node runs one whatever the number (gatewayThreadCount).
  if (typeof raw.GATEWAY_THREADS === 'string' && raw.GATEWAY_THREADS.toLowerCase() === 'auto') raw.GATEWAY_THREADS = autoThreads()
  const bad = new Set<string>()
  if (!validate(raw)) for (const e of validate.errors ?? []) bad.add(e.instancePath.slice(1))
  // The TLS files are read once here, so a missing or unreadable one stops the start, not the first handshake.
  for (const k of checkTlsFiles(raw as { TLS_CERT?: string, TLS_KEY?: string, TLS_CA?: string })) bad.add(k)
  if (bad.size > 0) {
    throw new ConfigError([...bad].map(k => `${k}=${shown(k, env[k])} is invalid: expected ${VARS[k as keyof Config].accepts}`))
  }
  const cfg = raw as Record<string, unknown>
  cfg.TRUSTED_PROXIES = String(cfg.TRUSTED_PROXIES).split(',').map(s => s.trim()).filter(Boolean)
  try { parseTrustedProxies(cfg.TRUSTED_PROXIES as string[]) } catch (err) {
    throw new ConfigError([`TRUSTED_PROXIES=${shown('TRUSTED_PROXIES', env.TRUSTED_PROXIES)} is invalid: ${(err as Error).message}; expected ${VARS.TRUSTED_PROXIES.accepts}`])
  }
  cfg.OUTBOUND_ALLOWLIST = String(cfg.OUTBOUND_ALLOWLIST).split(',').map(s => s.trim()).filter(Boolean)
  for (const k of ['MCP_ALLOWED_ORIGINS', 'MCP_ALLOWED_HOSTS'] as const) cfg[k] = String(cfg[k]).split(',').map(s => s.trim().toLowerCase()).filter(Boolean)
  cfg.OTEL_TRACES_SAMPLER_ARG = Number(cfg.OTEL_TRACES_SAMPLER_ARG)
  try { cfg.OTEL_EXPORTER_OTLP_HEADERS = parseOtlpHeaders(String(cfg.OTEL_EXPORTER_OTLP_HEADERS)) } catch {
    throw new ConfigError([`OTEL_EXPORTER_OTLP_HEADERS=${shown('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS)} is invalid: expected ${VARS.OTEL_EXPORTER_OTLP_HEADERS.accepts}`])
  }
  cfg.ASSISTANT_BASE_URL = String(cfg.ASSISTANT_BASE_URL).replace(/\/+$/, '')
  cfg.DATA_DIR = path.resolve(String(cfg.DATA_DIR))
  for (const k of ['TLS_CERT', 'TLS_KEY', 'TLS_CA', 'CONFIG_FILE']) if (cfg[k] !== '') cfg[k] = path.resolve(String(cfg[k]))
  return Object.freeze(cfg as unknown as Config)
}

/** OTEL_EXPORTER_OTLP_HEADERS: `name=value` pairs, values percent-decoded (W3C Baggage format, as OpenTelemetry reads it). */
function parseOtlpHeaders (raw: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue
    const i = pair.indexOf('=')
    const name = pair.slice(0, i).trim().toLowerCase()
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new Error('bad header name')
    out[name] = decodeURIComponent(pair.slice(i + 1).trim())
  }
  return out
}
