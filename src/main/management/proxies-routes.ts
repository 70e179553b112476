/** The proxy routes: a table over the proxy operations (src/main/operations/proxies.ts). */
import { cacheSchema } from '../gateway/responses/cache-policy.js'
import * as proxies from '../operations/proxies.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { headersSchema, pageQuery, proxyBodyProblems } from './validation.js'

export { seesPublishedOnly, visibleProxy } from '../operations/proxies.js'

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']
const fields = {
  collection_id: { type: 'string', minLength: 1, maxLength: 100 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  methods: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: METHODS } },
  path: { type: 'string', minLength: 1, maxLength: 1024 },
  target_path: { type: 'string', minLength: 1, maxLength: 1024 },
  headers: headersSchema,
  parameters: {
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'location'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100 },
        location: { type: 'string', enum: ['path', 'query'] },
        type: { type: 'string', enum: ['string', 'integer', 'number', 'boolean'], default: 'string' },
        required: { type: 'boolean', default: false },
        default: {},
        description: { type: 'string', maxLength: 2000 }
      }
    }
  },
  request_schema: { type: ['object', 'null'] },
  response_schema: { type: ['object', 'null'] },
  streaming: { type: 'boolean' },
  status: { type: 'string', enum: ['draft', 'published'] },
  timeout_ms: { type: ['integer', 'null'], minimum: 1, maximum: 3_600_000 },
  max_body_bytes: { type: ['integer', 'null'], minimum: 1, maximum: 1_073_741_824 },
  websocket: { type: 'boolean', description: 'Relay WebSocket upgrades (Upgrade: websocket) to the backend after the same access checks as any call; frames go both ways until either side closes (default false).' },
  apply_parameter_defaults: { type: 'boolean', description: 'Add a query parameter\'s default to the forwarded query when the caller omits it (default false: the backend sees the query as sent; defaults still pre-fill the developer portal).' },
  cache: cacheSchema,
  compression: { type: 'boolean', description: 'Compress answers (gzip or Brotli, by Accept-Encoding) for clients that accept it (default true; COMPRESSION=off turns it off everywhere; never for streaming proxies).' }
}
/** Proxy fields a client may send back as it read them; the workflow routes set them. */
const READ_ONLY = ['workflow_enabled', 'workflow', 'workflow_id']
const createSchema = { type: 'object', additionalProperties: false, required: ['collection_id', 'name', 'methods', 'path'], properties: fields }
const updateSchema = { type: 'object', additionalProperties: false, properties: fields }
const duplicateSchema = { type: 'object', additionalProperties: false, properties: { collection_id: fields.collection_id, name: fields.name, path: fields.path } }
const bulkSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'ids'],
  properties: {
    action: { type: 'string', enum: ['publish', 'unpublish', 'delete'] },
    ids: { type: 'array', minItems: 1, maxItems: 500, uniqueItems: true, items: { type: 'string', minLength: 1 } }
  }
}

const base = '/api/v1/proxies'

export const proxyRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  op({
    method: 'GET', path: base, operation: proxies.listProxiesOp,
    input: r => ({ page: pageQuery(r.query, { filters: ['collection_id'] }), collection_id: r.query.get('collection_id') ?? undefined })
  }),
  op({ method: 'POST', path: base, role: 'editor', body: createSchema, options: { readOnly: READ_ONLY, fieldProblems: proxyBodyProblems }, status: 201, etag: true, input: r => ({ fields: r.body }), operation: proxies.createProxyOp }),
  op({ method: 'POST', path: `${base}/bulk`, role: 'editor', body: bulkSchema, input: r => ({ action: r.body.action, ids: r.body.ids }), operation: proxies.bulkProxiesOp }),
  op({ method: 'GET', path: `${base}/:id`, etag: true, input: r => ({ id: r.params.id }), operation: proxies.getProxyOp }),
  op({ method: 'PUT', path: `${base}/:id`, role: 'editor', body: updateSchema, options: { readOnly: READ_ONLY }, etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: proxies.updateProxyOp }),
  op({ method: 'DELETE', path: `${base}/:id`, role: 'editor', status: 204, input: r => ({ id: r.params.id, ifMatch: r.ifMatch }), operation: proxies.deleteProxyOp }),
  op({ method: 'POST', path: `${base}/:id/duplicate`, role: 'editor', body: duplicateSchema, status: 201, etag: true, input: r => ({ id: r.params.id, ...r.body }), operation: proxies.duplicateProxyOp })
]
