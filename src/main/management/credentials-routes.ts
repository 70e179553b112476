/** The credential routes: a table over the credential operations (src/main/operations/credentials.ts). */
import * as credentials from '../operations/credentials.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { pageQuery } from './validation.js'

const body = (required: string[]) => ({
  type: 'object', additionalProperties: false, required,
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, type: { type: 'string' }, config: { type: 'object' } }
})

const validateSchema = { type: 'object', additionalProperties: false, required: ['type', 'config'], properties: { type: { type: 'string' }, config: { type: 'object' } } }
const base = '/api/v1/credentials'

export const credentialRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  op({ method: 'GET', path: base, input: r => ({ page: pageQuery(r.query, { filters: ['type'] }), type: r.query.get('type') ?? undefined }), operation: credentials.listCredentialsOp }),
  op({ method: 'GET', path: `${base}/:id`, etag: true, input: r => ({ id: r.params.id }), operation: credentials.getCredentialOp }),
  op({ method: 'POST', path: `${base}/validate`, role: 'admin', body: validateSchema, options: { audit: false }, input: r => ({ type: r.body.type, config: r.body.config }), operation: credentials.validateCredentialOp }),
  op({ method: 'POST', path: base, role: 'admin', body: body(['name', 'type', 'config']), status: 201, etag: true, input: r => ({ name: r.body.name, type: r.body.type, config: r.body.config }), operation: credentials.createCredentialOp }),
  op({ method: 'PUT', path: `${base}/:id`, role: 'admin', body: body([]), etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: credentials.updateCredentialOp }),
  op({ method: 'DELETE', path: `${base}/:id`, role: 'admin', status: 204, input: r => ({ id: r.params.id, ifMatch: r.ifMatch }), operation: credentials.deleteCredentialOp })
]
