/**
 * JSON Schema (draft-07) of the configuration file, published at GET /api/v1/config/schema.json
 * for editors (YAML language servers, CI checks). Built from the schemas the REST routes and the
 * collection file use, never a copy, so the file and the API cannot drift apart.
 */
import { collectionSchema, proxySchema } from '../collections-io/export-file-schema.js'
import { CONFIG_SCHEMAS } from '../credentials/schemas.js'
import { CREDENTIAL_TYPES } from '../credentials/types.js'
import { clientFields, policyFields, profileFields } from '../management/access-routes.js'
import { CONFIG_FORMAT_VERSION } from './dump.js'

export const CONFIG_SCHEMA_PATH = '/api/v1/config/schema.json'

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', additionalProperties: false, required, properties })

const profile = obj({
  name: profileFields.name,
  auth_type: profileFields.auth_type,
  policy: { type: ['string', 'null'], minLength: 1, description: 'The name of a policy of the file.' },
  collections: { type: 'array', uniqueItems: true, items: { type: 'string', pattern: '^/' }, description: 'Base paths of the collections the profile may call.' },
  allowed_methods: profileFields.allowed_methods,
  ip_allowlist: profileFields.ip_allowlist,
  oidc: profileFields.oidc,
  mtls_fingerprint: profileFields.mtls_fingerprint
}, ['name', 'auth_type'])

const credential = {
  ...obj({ name: { type: 'string', minLength: 1 }, type: { enum: [...CREDENTIAL_TYPES] }, config: { type: 'object' } }, ['name', 'type', 'config']),
  // The config of each type as the credential routes take it; secret fields hold ${ENV} references.
  allOf: CREDENTIAL_TYPES.map(t => ({ if: { properties: { type: { const: t } } }, then: { properties: { config: CONFIG_SCHEMAS[t] } } }))
}

export const configFileSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: CONFIG_SCHEMA_PATH,
  title: 'Gatehouse configuration file',
  ...obj({
    format_version: { const: CONFIG_FORMAT_VERSION },
    collections: {
      type: 'array',
      items: {
        ...collectionSchema,
        properties: { ...collectionSchema.properties, proxies: { type: 'array', items: proxySchema, default: [] } }
      }
    },
    policies: { type: 'array', items: obj(policyFields, ['name']) },
    clients: { type: 'array', items: obj({ ...clientFields, profiles: { type: 'array', items: profile, default: [] } }, ['name']) },
    credentials: { type: 'array', items: credential }
  }, ['format_version'])
}
