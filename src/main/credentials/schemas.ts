/**
 * JSON schemas of each credential type's `config`, and the validation that the
 * create, update and validate routes run. Messages name fields, never values:
 * ajv's messages quote only the schema, so a secret cannot leak through them.
 */
import type { ErrorDetail } from '../../common/errors.js'
import { ajv, ajvDetails, compileOnFirstUse } from '../validation/ajv.js'
import { CREDENTIAL_TYPES, SECRET_FIELDS, SECRET_MASK, isCredentialType, type CredentialType } from './types.js'
import { getPath } from './secret-fields.js'

const text = (maxLength = 1024) => ({ type: 'string', minLength: 1, maxLength })
const secret = { type: 'string', minLength: 1, maxLength: 8192 }
const host = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[^\\s/@]+$' }
const httpUrl = { type: 'string', maxLength: 2048, pattern: '^https?://[^\\s]+$' }

export const CONFIG_SCHEMAS: { readonly [T in CredentialType]: Record<string, unknown> } = {
  imap: {
    type: 'object',
    additionalProperties: false,
    required: ['host', 'username', 'password'],
    properties: {
      host,
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      username: text(),
      password: secret,
      tls: {
        type: 'object',
        default: {},
        additionalProperties: false,
        properties: {
          secure: { type: 'boolean', default: true },
          starttls: { type: 'boolean' },
          reject_unauthorized: { type: 'boolean', default: true }
        }
      },
      mailbox: { ...text(), default: 'INBOX' }
    }
  },
  kafka: {
    type: 'object',
    additionalProperties: false,
    required: ['brokers'],
    properties: {
      brokers: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', maxLength: 300, pattern: '^[^\\s/]+:[0-9]{1,5}$' } },
      client_id: { ...text(255), default: 'gatehouse' },
      sasl: {
        type: 'object',
        additionalProperties: false,
        required: ['mechanism', 'username', 'password'],
        properties: {
          mechanism: { enum: ['plain', 'scram-sha-256', 'scram-sha-512'] },
          username: text(),
          password: secret
        }
      },
      ssl: { type: 'boolean', default: false }
    }
  },
  http_basic: {
    type: 'object',
    additionalProperties: false,
    required: ['username', 'password'],
    // RFC 7617: the user-id of Basic authentication cannot hold a colon.
    properties: { username: { ...text(), pattern: '^[^:]*$' }, password: secret }
  },
  http_bearer: {
    type: 'object',
    additionalProperties: false,
    required: ['token'],
    properties: { token: secret }
  },
  http_header: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
      // No CR or LF: a header value must not be able to start another header.
      value: { ...secret, pattern: '^[^\\r\\n]*$' }
    }
  },
  oauth2_client_credentials: {
    type: 'object',
    additionalProperties: false,
    required: ['token_url', 'client_id', 'client_secret'],
    properties: { token_url: httpUrl, client_id: text(), client_secret: secret, scope: { type: 'string', maxLength: 2048 } }
  }
}

const validators = Object.fromEntries(CREDENTIAL_TYPES.map(t => [t, compileOnFirstUse(ajv, CONFIG_SCHEMAS[t])]))

/**
 * Checks a credential's `type` and `config` and returns one detail per problem
 * (empty when valid). On success, defaults are filled into `config` in place
 * (imap: tls.secure true, tls.reject_unauthorized true, mailbox "INBOX", port
 * 993 or 143; kafka: client_id "gatehouse", ssl false). Run it after
 * `mergeForUpdate`, so a mask left without a stored secret is reported.
 */
export function validateCredentialInput (type: unknown, config: unknown): ErrorDetail[] {
  if (!isCredentialType(type)) return [{ field: 'type', message: `must be one of: ${CREDENTIAL_TYPES.join(', ')}` }]
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return [{ field: 'config', message: 'must be object' }]
  if (type === 'imap') foldImapTlsShorthand(config as Record<string, unknown>)
  const validate = validators[type]!
  const details = validate(config) ? [] : ajvDetails(validate.errors, 'config')
  for (const p of SECRET_FIELDS[type]) {
    if (getPath(config, p) === SECRET_MASK) {
      details.push({ field: `config.${p}`, message: `is the mask "${SECRET_MASK}"; send the secret itself (the mask keeps a stored secret only on update)` })
    }
  }
  if (type === 'imap' && details.length === 0) {
    const c = config as { port?: number, tls: { secure: boolean, starttls?: boolean } }
    if (c.tls.secure && c.tls.starttls === true) {
      details.push({ field: 'config.tls.starttls', message: 'cannot be true when config.tls.secure is true (the connection is already TLS)' })
    }
    c.port ??= c.tls.secure ? 993 : 143
  }
  return details
}

const IMAP_TLS_KEYS = ['secure', 'starttls', 'reject_unauthorized'] as const

/**
 * The common shorthands of IMAP TLS settings, folded in place into the `tls` object:
 * `tls: true|false` means `tls.secure`, and `secure`, `starttls`, `reject_unauthorized`
 * given beside `host` move into `tls` (unless `tls` sets them too).
 */
function foldImapTlsShorthand (config: Record<string, unknown>): void {
  if (typeof config.tls === 'boolean') config.tls = { secure: config.tls }
  const moved = IMAP_TLS_KEYS.filter(k => typeof config[k] === 'boolean')
  if (moved.length === 0) return
  if (config.tls === undefined) config.tls = {}
  if (typeof config.tls !== 'object' || config.tls === null || Array.isArray(config.tls)) return
  const tls = config.tls as Record<string, unknown>
  for (const k of moved) {
    tls[k] ??= config[k]
    delete config[k]
  }
}
