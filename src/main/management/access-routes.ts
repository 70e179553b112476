/** Policies, API clients and their access profiles (admin writes, viewer reads): tables over src/main/operations/access.ts and profiles.ts. */
import type { BaseRecord } from '../../common/types.js'
import { clientOps, deleteClientOp, deletePolicyOp, policyOps, setClientStatusOp, setPolicyStatusOp, type RecordOperations } from '../operations/access.js'
import * as profiles from '../operations/profiles.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import { pageQuery } from './validation.js'

const name = { type: 'string', minLength: 1, maxLength: 200 }
const description = { type: 'string', maxLength: 5000 }
export const policyFields = {
  name, description,
  status: { type: 'string', enum: ['enabled', 'disabled'] },
  rate_limit: { type: ['object', 'null'], additionalProperties: false, required: ['requests', 'per_seconds'], properties: { requests: { type: 'integer', minimum: 1 }, per_seconds: { type: 'integer', minimum: 1, maximum: 31_536_000 } } },
  quota: { type: ['object', 'null'], additionalProperties: false, required: ['requests', 'period'], properties: { requests: { type: 'integer', minimum: 1 }, period: { type: 'string', enum: ['day', 'month'] } } }
}
export const clientFields = { name, description, status: { type: 'string', enum: ['active', 'suspended'] } }
const AUTH_TYPES = ['api_key', 'jwt', 'oidc', 'mtls', 'none']
export const profileFields = {
  // May be sent (it is a field of the record); must then be the client of the path.
  client_id: { type: 'string', minLength: 1 },
  name,
  auth_type: { type: 'string', enum: AUTH_TYPES },
  policy_id: { type: ['string', 'null'] },
  collection_ids: { type: 'array', maxItems: 1000, uniqueItems: true, items: { type: 'string', minLength: 1 } },
  allowed_methods: { type: ['array', 'null'], uniqueItems: true, items: { type: 'string', enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD'] } },
  ip_allowlist: { type: ['array', 'null'], maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 64 } },
  oidc: { type: ['object', 'null'], additionalProperties: false, required: ['issuer'], properties: { issuer: { type: 'string', pattern: '^https?://' }, jwks_url: { type: ['string', 'null'], pattern: '^https?://' }, audience: { type: ['string', 'null'] } } },
  mtls_fingerprint: { type: ['string', 'null'], pattern: '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$' }
}
const obj = (props: object, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties: props })
/** Profile fields a client may send back as it read them; they cannot be set. */
const PROFILE_READ_ONLY = ['has_credentials', 'rotated_at', 'credentials']

/** List, read, create and update: the same four routes for policies and clients. */
const recordRoutes = <R extends BaseRecord>(base: string, ops: RecordOperations<R>, fields: object): Array<OperationRoute<OperationDeps>> => [
  op({ method: 'GET', path: base, input: r => ({ page: pageQuery(r.query) }), operation: ops.list }),
  op({ method: 'GET', path: `${base}/:id`, etag: true, input: r => ({ id: r.params.id }), operation: ops.get }),
  op({ method: 'POST', path: base, role: 'admin', body: obj(fields, ['name']), status: 201, etag: true, input: r => ({ fields: r.body }), operation: ops.create }),
  op({ method: 'PUT', path: `${base}/:id`, role: 'admin', body: obj(fields), etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: ops.update })
]

const profilesPath = '/api/v1/clients/:clientId/profiles'

export const accessRoutes: ReadonlyArray<OperationRoute<OperationDeps>> = [
  // --- policies ---------------------------------------------------------------
  ...recordRoutes('/api/v1/policies', policyOps, policyFields),
  op({ method: 'PUT', path: '/api/v1/policies/:id/toggle-status', role: 'admin', body: obj({ status: policyFields.status }), etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, status: r.body.status }), operation: setPolicyStatusOp }),
  op({ method: 'DELETE', path: '/api/v1/policies/:id', role: 'admin', status: 204, input: r => ({ id: r.params.id, ifMatch: r.ifMatch }), operation: deletePolicyOp }),

  // --- clients ----------------------------------------------------------------
  ...recordRoutes('/api/v1/clients', clientOps, clientFields),
  op({ method: 'PUT', path: '/api/v1/clients/:id/status', role: 'admin', body: obj({ status: clientFields.status }), etag: true, input: r => ({ id: r.params.id, ifMatch: r.ifMatch, status: r.body.status }), operation: setClientStatusOp }),
  op({ method: 'DELETE', path: '/api/v1/clients/:id', role: 'admin', status: 204, input: r => ({ id: r.params.id, ifMatch: r.ifMatch }), operation: deleteClientOp }),

  // --- profiles ---------------------------------------------------------------
  op({ method: 'GET', path: profilesPath, input: r => ({ clientId: r.params.clientId, page: pageQuery(r.query) }), operation: profiles.listProfilesOp }),
  op({ method: 'GET', path: `${profilesPath}/:id`, etag: true, input: r => ({ clientId: r.params.clientId, id: r.params.id }), operation: profiles.getProfileOp }),
  op({ method: 'POST', path: profilesPath, role: 'admin', body: obj(profileFields, ['name']), options: { readOnly: PROFILE_READ_ONLY }, status: 201, etag: true, input: r => ({ clientId: r.params.clientId, fields: r.body }), operation: profiles.createProfileOp }),
  op({ method: 'PUT', path: `${profilesPath}/:id`, role: 'admin', body: obj(profileFields), options: { readOnly: PROFILE_READ_ONLY }, etag: true, input: r => ({ clientId: r.params.clientId, id: r.params.id, ifMatch: r.ifMatch, fields: r.body }), operation: profiles.updateProfileOp }),
  op({ method: 'DELETE', path: `${profilesPath}/:id`, role: 'admin', status: 204, input: r => ({ clientId: r.params.clientId, id: r.params.id, ifMatch: r.ifMatch }), operation: profiles.deleteProfileOp }),
  op({ method: 'POST', path: `${profilesPath}/:id/rotate`, role: 'admin', etag: true, input: r => ({ clientId: r.params.clientId, id: r.params.id, ifMatch: r.ifMatch }), operation: profiles.rotateProfileOp }),
  op({
    method: 'PUT', path: `${profilesPath}/:id/auth-type`, role: 'admin', etag: true, operation: profiles.setProfileAuthTypeOp,
    body: obj({ auth_type: profileFields.auth_type, oidc: profileFields.oidc, mtls_fingerprint: profileFields.mtls_fingerprint }, ['auth_type']),
    input: r => ({ clientId: r.params.clientId, id: r.params.id, ifMatch: r.ifMatch, fields: r.body })
  }),
  op({ method: 'GET', path: `${profilesPath}/:id/credentials`, input: r => ({ clientId: r.params.clientId, id: r.params.id }), operation: profiles.getProfileCredentialsOp })
]
