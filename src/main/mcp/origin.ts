/**
 * DNS-rebinding protection for the MCP endpoints: a web page on another site must not reach a
 * loopback-bound server through a browser. Host must name this server (a loopback name while the
 * listener is bound to loopback, or one of MCP_ALLOWED_HOSTS), and a browser's Origin must be the
 * server's own origin or one of MCP_ALLOWED_ORIGINS. Clients that send no Origin (SDKs, CLIs) pass.
 */
import type { Config } from '../config/config.js'

const LOOPBACK_BINDS = new Set(['127.0.0.1', '::1', 'localhost'])
const LOOPBACK_NAMES = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** Why the request is refused (a sentence), or null when it may proceed. */
export function checkOrigin (headers: { host?: string, origin?: string }, config: Pick<Readonly<Config>, 'MANAGEMENT_HOST' | 'MCP_ALLOWED_HOSTS' | 'MCP_ALLOWED_ORIGINS'>, bind = config.MANAGEMENT_HOST): string | null {
  const host = (headers.host ?? '').toLowerCase()
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]! // split gives at least one element
  if (config.MCP_ALLOWED_HOSTS.length > 0) {
    if (!config.MCP_ALLOWED_HOSTS.includes(host) && !config.MCP_ALLOWED_HOSTS.includes(hostname)) return `Host '${host}' is not allowed; add it to MCP_ALLOWED_HOSTS.`
  } else if (LOOPBACK_BINDS.has(bind) && !LOOPBACK_NAMES.has(hostname)) {
    return `Host '${host}' is not a loopback name while the listener is bound to ${bind}; set MCP_ALLOWED_HOSTS to accept it.`
  }
  const origin = headers.origin?.toLowerCase()
  if (origin === undefined) return null
  if (config.MCP_ALLOWED_ORIGINS.includes(origin)) return null
  let originHost: string
  try { originHost = new URL(origin).host } catch { return `Origin '${origin}' is not allowed.` }
  if (originHost === host) return null
  return `Origin '${origin}' is not allowed; add it to MCP_ALLOWED_ORIGINS.`
}
