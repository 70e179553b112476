// Runs the compiled gateway with one published proxy to the bench backend, on one event loop.
import { loadConfig } from '../dist/src/main/config/config.js'
import { createGateway } from '../dist/src/main/gateway/index.js'
import { createLogger } from '../dist/src/main/logger.js'
import { createTracer } from '../dist/src/main/observability/tracing/tracer.js'

const [port, backendPort] = process.argv.slice(2).map(Number)
// OTEL_* from the environment (bench/tracing.mjs): tracing on when an endpoint is given.
const otel = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('OTEL_')))
// GATEWAY_SERVER from the environment (bench/http-layers.mjs): uws (default) or node.
const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', GATEWAY_SERVER: process.env.GATEWAY_SERVER ?? 'uws', ...otel })
const logger = createLogger(config)
const tracer = createTracer(config, logger)
const gateway = createGateway({ config, logger, readiness: async () => ({ ok: true, checks: {} }), tracer })
const now = new Date().toISOString()
const collection = {
  id: 'bench', name: 'bench', description: '', base_path: '/api', upstream_url: `http://127.0.0.1:${backendPort}`,
  status: 'active', headers: [{ name: 'x-team', value: 'bench' }], auth_required: false, version: 1, created_at: now, updated_at: now
}
const proxy = {
  id: 'bench-p', collection_id: 'bench', name: 'items', description: '', methods: ['GET', 'POST'], path: '/items/{id}', target_path: '/items/{id}',
  headers: [], parameters: [], request_schema: null, response_schema: null, streaming: false, status: 'published', workflow_enabled: false,
  workflow: null, workflow_id: 'w', timeout_ms: null, version: 1, created_at: now, updated_at: now
}
gateway.setRoutes([collection], [proxy])
await gateway.listen()
process.stdout.write('ready\n')
process.on('SIGTERM', () => { gateway.close().then(() => tracer?.shutdown()).then(() => process.exit(0)) })
process.on('SIGINT', () => { gateway.close().then(() => process.exit(0)) })
