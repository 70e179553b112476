/** The collection routes: a table over the collection operations (src/main/operations/collections.ts). */
import { corsSchema } from '../gateway/responses/cors.js'
import * as collections from '../operations/collections.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { missingUpstream, upstreamProblems, upstreamSchema } from './upstream-fields.js'
import { collectionFieldProblems, headersSchema, pageQuery } from './validation.js'

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  base_path: { type: 'string', minLength: 1, maxLength: 512 },
  upstream_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'Backend base URL: the shorthand for an upstream of this one target.' },
  upstream: upstreamSchema,
  status: { type: 'string', enum: ['active', 'disabled'] },
  headers: headersSchema,
  auth_required: { type: 'boolean' },
  cors: corsSchema
}
const createSchema = { type: 'object', additionalProperties: false, required: ['name', 'base_path'], properties: fields }
const updateSchema = { type: 'object', additionalProperties: false, properties: fields }
// Without a status the route toggles active <-> disabled.
const statusSchema = { type: 'object', additionalProperties: false, properties: { status: fields.status } }
const bodyProblems = (b: Record<string, unknown>) => [...collectionFieldProblems(b), ...upstreamProblems(b)]
const createProblems = (b: Record<string, unknown>) => [...missingUpstream(b), ...bodyProblems(b)]
const duplicateSchema = { type: 'object', additionalProperties: false, properties: { name: fields.name, base_path: fields.base_path } }

const base = '/api/v1/collections'

export const collectionRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  op({ method: 'GET', path: base, input: r => ({ page: pageQuery(r.query) }), operation: collections.listCollectionsOp }),
  op({ method: 'POST', path: base, role: 'editor', body: createSchema, options: { fieldProblems: createProblems }, status: 201, etag: true, input: r => ({ fields: r.body }), operation: collections.createCollectionOp }),
  op({ method: 'GET', path: `${base}/:id`, etag: true, input: r => ({ id: r.params.id }), operation: collections.getCollectionOp }),
  op({ method: 'PUT', path: `${base}/:id`, role: 'editor', body: updateSchema, options: { fieldProblems: bodyProblems }, etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: collections.updateCollectionOp }),
  op({ method: 'DELETE', path: `${base}/:id`, role: 'editor', status: 204, input: r => ({ id: r.params.id, ifMatch: r.ifMatch }), operation: collections.deleteCollectionOp }),
  op({ method: 'PUT', path: `${base}/:id/status`, role: 'editor', body: statusSchema, etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, status: r.body.status }), operation: collections.setCollectionStatusOp }),
  op({ method: 'POST', path: `${base}/:id/duplicate`, role: 'editor', body: duplicateSchema, status: 201, etag: true, input: r => ({ id: r.params.id, ...r.body }), operation: collections.duplicateCollectionOp })
]
