/** A gateway on port 0 plus record factories, and a recording backend on 127.0.0.1. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '../../src/main/config/config.js'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/main/gateway/index.js'
import type { Collection, Proxy } from '../../src/common/types.js'
import { silentLogger } from './db.js'
import { mergeUpstream, storedUpstream, type UpstreamInput } from '../../src/common/upstream-settings.js'

interface T { teardown (fn: () => unknown): void }

/** Every HTTP layer the gateway runs on (GATEWAY_SERVER). */
export const GATEWAY_SERVERS = ['uws', 'node'] as const
/**
 * The layer this test process runs the contract suite against: test/main/gateway/node/*.test.ts
 * set GATEWAY_SERVER=node and import a behaviour test file, so each runs once per layer.
 */
export const GATEWAY_SERVER: 'uws' | 'node' = process.env.GATEWAY_SERVER === 'node' ? 'node' : 'uws'

let seq = 0
export function collection (over: Partial<Collection> = {}): Collection {
  seq++
  const upstreamUrl = over.upstream_url ?? 'http://127.0.0.1:9'
  return {
    id: `c${seq}`, name: `c${seq}`, description: '', base_path: `/c${seq}`, upstream_url: upstreamUrl, status: 'active',
    headers: [], auth_required: false, cors: null, version: 1, created_at: '', updated_at: '',
    // As the store reads it: a collection given by upstream_url has that one target.
    upstream: over.upstream ?? storedUpstream(null, upstreamUrl), ...over
  }
}
/** A collection whose upstream is these targets with these settings (defaults for the rest). */
export function balancedCollection (targets: Array<{ url: string, weight?: number }>, settings: Omit<UpstreamInput, 'targets'> = {}, over: Partial<Collection> = {}): Collection {
  const upstream = mergeUpstream(null, { ...settings, targets }, undefined)
  const c = collection({ upstream, ...over })
  if (targets.length !== 1) delete c.upstream_url
  else c.upstream_url = targets[0]!.url
  return c
}

export function proxy (c: Collection, over: Partial<Proxy> = {}): Proxy {
  seq++
  return {
    id: `p${seq}`, collection_id: c.id, name: `p${seq}`, description: '', methods: ['GET'], path: '/', target_path: '/', headers: [],
    parameters: [], request_schema: null, response_schema: null, streaming: false, status: 'published', workflow_enabled: false,
    workflow: null, workflow_id: `w${seq}`, timeout_ms: null, max_body_bytes: null, cache: null, compression: true, apply_parameter_defaults: false, websocket: false, version: 1, created_at: '', updated_at: '', ...over
  }
}

export async function startGateway (t: T, env: Record<string, string> = {}, conf: Record<string, string> = {}, extra: Partial<GatewayOptions> = {}): Promise<{ gateway: Gateway, url: string, port: number }> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '3000', GATEWAY_SERVER, ...conf })
  const gateway = createGateway({ config, logger: silentLogger, readiness: async () => ({ ok: true, checks: { database: 'ok' } }), env, ...extra })
  const { port } = await gateway.listen()
  t.teardown(async () => { await gateway.close() })
  return { gateway, url: `http://127.0.0.1:${port}`, port }
}

export interface Seen { method: string, url: string, headers: http.IncomingHttpHeaders, body: string }

export async function startBackend (t: T, handler?: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): Promise<{ url: string, seen: Seen[], server: http.Server }> {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: body.toString() })
      if (handler !== undefined) { handler(req, res, body); return }
      res.writeHead(200, { 'content-type': 'application/json', 'x-backend': 'yes' })
      res.end(JSON.stringify({ method: req.method, url: req.url, body: body.toString() }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server }
}

/** Sends raw bytes and returns what came back before the server closed or went quiet. */
export async function rawRequest (port: number, raw: string, quietMs = 400): Promise<string> {
  const net = await import('node:net')
  return await new Promise(resolve => {
    const s = net.connect(port, '127.0.0.1', () => s.write(raw))
    let out = ''
    s.on('data', d => { out += d.toString() })
    s.setTimeout(quietMs, () => { s.destroy(); resolve(out) })
    s.on('close', () => resolve(out))
    s.on('error', () => resolve(out))
  })
}
