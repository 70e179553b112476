/**
 * JSON Schema (draft-07, for ajv) of the collection export file, format_version 1. Strict:
 * unknown fields are refused so that a typo is reported instead of silently dropped.
 * Optional fields get their defaults (ajv `useDefaults`).
 */
import { WORKFLOW_DEFINITION_SCHEMA } from '../../common/workflow-catalogue.js'
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from './export-file.js'
import { corsSchema } from '../gateway/responses/cors.js'
import { cacheSchema } from '../gateway/responses/cache-policy.js'
import { upstreamSchema } from '../management/upstream-fields.js'

export const IMPORT_LIMITS = {
  collections: 100,
  proxiesPerCollection: 1000,
  nodesPerWorkflow: 500,
  edgesPerWorkflow: 2000,
  headers: 100,
  parameters: 100
}

const text = (maxLength: number, minLength = 0) => ({ type: 'string', minLength, maxLength })

const header = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
    value: text(8192),
    env: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }
  }
}
const headers = { type: 'array', maxItems: IMPORT_LIMITS.headers, items: header, default: [] }

const parameter = {
  type: 'object',
  required: ['name', 'location', 'type'],
  additionalProperties: false,
  properties: {
    name: text(128, 1),
    location: { enum: ['path', 'query'] },
    type: { enum: ['string', 'integer', 'number', 'boolean'] },
    required: { type: 'boolean', default: false },
    default: { type: ['string', 'number', 'boolean', 'null'] },
    description: text(4096)
  }
}

// Exactly the layout the save route accepts (position, ids without a fixed shape, edges
// without id, every runtime setting), so a file written by an export always imports back.
const workflow = { ...WORKFLOW_DEFINITION_SCHEMA, type: ['object', 'null'] }

export const proxySchema = {
  type: 'object',
  required: ['name', 'methods', 'path'],
  additionalProperties: false,
  properties: {
    name: text(256, 1),
    description: { ...text(10000), default: '' },
    methods: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] } },
    path: { type: 'string', maxLength: 2048, pattern: '^/' },
    target_path: { type: 'string', maxLength: 2048, pattern: '^/' },
    headers,
    parameters: { type: 'array', maxItems: IMPORT_LIMITS.parameters, items: parameter, default: [] },
    request_schema: { type: ['object', 'null'], default: null },
    response_schema: { type: ['object', 'null'], default: null },
    streaming: { type: 'boolean', default: false },
    status: { enum: ['draft', 'published'], default: 'draft' },
    workflow_enabled: { type: 'boolean', default: false },
    workflow: { ...workflow, default: null },
    timeout_ms: { type: ['integer', 'null'], minimum: 1, default: null },
    max_body_bytes: { type: ['integer', 'null'], minimum: 1, maximum: 1_073_741_824, default: null },
    apply_parameter_defaults: { type: 'boolean' },
    websocket: { type: 'boolean' },
    compression: { type: 'boolean' },
    cache: cacheSchema
  }
}

export const collectionSchema = {
  type: 'object',
  required: ['name', 'base_path'],
  // A backend as upstream_url (one target) or upstream (its targets are checked on import).
  if: { not: { required: ['upstream'] } },
  then: { required: ['upstream_url'] },
  additionalProperties: false,
  properties: {
    name: text(256, 1),
    description: { ...text(10000), default: '' },
    base_path: { type: 'string', maxLength: 512, pattern: '^/[^\\s?#]*$' },
    upstream_url: { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s]+$' },
    upstream: upstreamSchema,
    status: { enum: ['active', 'disabled'], default: 'active' },
    headers,
    auth_required: { type: 'boolean', default: true },
    cors: { ...corsSchema, default: null }
  }
}

export const exportFileSchema = {
  type: 'object',
  required: ['format', 'format_version', 'collections'],
  additionalProperties: false,
  properties: {
    format: { const: EXPORT_FORMAT },
    format_version: { const: EXPORT_FORMAT_VERSION },
    exported_at: { type: 'string', maxLength: 64 },
    collections: {
      type: 'array',
      minItems: 1,
      maxItems: IMPORT_LIMITS.collections,
      items: {
        type: 'object',
        required: ['collection', 'proxies'],
        additionalProperties: false,
        properties: {
          collection: collectionSchema,
          proxies: { type: 'array', maxItems: IMPORT_LIMITS.proxiesPerCollection, items: proxySchema }
        }
      }
    }
  }
}
