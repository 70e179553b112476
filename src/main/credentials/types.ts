/**
 * Credential types and the shape of each type's `config`. Which fields are
 * secret is declared once here (SECRET_FIELDS); masking, merging and sealing
 * all read that table.
 */
import type { BaseRecord } from '../../common/types.js'

export const CREDENTIAL_TYPES = ['imap', 'kafka', 'http_basic', 'http_bearer', 'http_header', 'oauth2_client_credentials'] as const
export type CredentialType = typeof CREDENTIAL_TYPES[number]

/** What every read returns in place of a secret; sending it back on update keeps the stored secret. */
export const SECRET_MASK = '********'

export interface ImapConfig {
  host: string
  port: number
  username: string
  password: string
  /** secure: implicit TLS (port 993). starttls: true requires the upgrade, false forbids it, absent upgrades when offered. */
  tls: { secure: boolean, starttls?: boolean, reject_unauthorized: boolean }
  mailbox: string
}

export interface KafkaConfig {
  brokers: string[]
  client_id: string
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', username: string, password: string }
  ssl: boolean
}

export interface HttpBasicConfig { username: string, password: string }
export interface HttpBearerConfig { token: string }
export interface HttpHeaderConfig { name: string, value: string }
export interface OAuth2ClientCredentialsConfig { token_url: string, client_id: string, client_secret: string, scope?: string }

export interface CredentialConfigs {
  imap: ImapConfig
  kafka: KafkaConfig
  http_basic: HttpBasicConfig
  http_bearer: HttpBearerConfig
  http_header: HttpHeaderConfig
  oauth2_client_credentials: OAuth2ClientCredentialsConfig
}

/** Dotted paths of the secret fields in each type's config. */
export const SECRET_FIELDS: { readonly [T in CredentialType]: readonly string[] } = {
  imap: ['password'],
  kafka: ['sasl.password'],
  http_basic: ['password'],
  http_bearer: ['token'],
  http_header: ['value'],
  oauth2_client_credentials: ['client_secret']
}

/** A credential record as the management API returns it (secret fields masked). */
export interface Credential<T extends CredentialType = CredentialType> extends BaseRecord {
  name: string
  type: T
  config: CredentialConfigs[T]
}

export function isCredentialType (value: unknown): value is CredentialType {
  return typeof value === 'string' && (CREDENTIAL_TYPES as readonly string[]).includes(value)
}
