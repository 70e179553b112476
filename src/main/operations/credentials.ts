/**
 * Credential operations. Secret fields are sealed (AES-256-GCM) before they are stored, masked
 * on every read, and kept when an update sends the mask back. Secrets never reach an event, a
 * log line or an error message. A change moves the configuration version (every instance
 * reloads), so workflow runs, which keep their opened credentials until it moves, use the new
 * secret from then on.
 */
import { randomUUID } from 'node:crypto'
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { Page } from '../../common/types.js'
import { validateImapCredential } from '../credentials/imap-validate.js'
import { validateCredentialInput } from '../credentials/schemas.js'
import { maskConfig, mergeForUpdate, openConfig, sealConfig } from '../credentials/secret-fields.js'
import type { CredentialType, ImapConfig } from '../credentials/types.js'
import { credentials, type CredentialRecord } from '../store/access.js'
import type { PageQuery } from '../store/rows.js'
import type { Caller, OperationDeps, RecordRef } from './types.js'

const invalid = (details: ErrorDetail[]) => validationFailed(`The credential is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
const masked = (c: CredentialRecord): CredentialRecord => ({ ...c, config: maskConfig(c.type as CredentialType, c.config) })

export interface CredentialFields { name?: string, type?: string, config?: Record<string, unknown> }

export async function listCredentialsOp (deps: OperationDeps, _caller: Caller, input: { page: PageQuery, type?: string }): Promise<Page<CredentialRecord>> {
  const page = await credentials.list(deps.store, input.page, { type: input.type })
  return { ...page, items: page.items.map(masked) }
}

export async function getCredentialOp (deps: OperationDeps, _caller: Caller, input: RecordRef): Promise<CredentialRecord> {
  return masked(await credentials.get(deps.store, input.id))
}

/** Tries an IMAP credential against its server (changes nothing). */
export async function validateCredentialOp (_deps: OperationDeps, _caller: Caller, input: { type: string, config: Record<string, unknown> }): Promise<unknown> {
  const { type, config } = input
  if (type !== 'imap') throw invalid([{ field: 'type', message: `only 'imap' credentials can be validated (got '${String(type)}')` }])
  const details = validateCredentialInput(type, config)
  if (details.length > 0) throw invalid(details)
  return await validateImapCredential(config as unknown as ImapConfig, { timeoutMs: 15_000 })
}

export async function createCredentialOp (deps: OperationDeps, caller: Caller, input: { name: string, type: string, config: Record<string, unknown> }): Promise<CredentialRecord> {
  const { name, type, config } = input
  const details = validateCredentialInput(type, config ?? {})
  if (details.length > 0) throw invalid(details)
  const id = randomUUID()
  const sealed = sealConfig(await deps.secretsKey(), type as CredentialType, config, id)
  const c = await deps.store.tx(async q => await credentials.insert(q, { id, name, type, config: sealed }))
  deps.effects.changed(caller, { resource_kind: 'credential', credential_id: c.id, operation: 'created' })
  return masked(c)
}

export async function updateCredentialOp (deps: OperationDeps, caller: Caller, input: RecordRef & { fields: CredentialFields }): Promise<CredentialRecord> {
  const k = await deps.secretsKey()
  const fields = input.fields
  const { after } = await deps.store.tx(async q => {
    const cur = await credentials.lock(q, input.id)
    const type = (fields.type ?? cur.type) as CredentialType
    let config = cur.config
    if (fields.config !== undefined || type !== cur.type) {
      const stored = type === cur.type ? openConfig(k, type, cur.config, cur.id) : {}
      const merged = mergeForUpdate(type, stored, fields.config ?? {})
      const details = validateCredentialInput(type, merged)
      if (details.length > 0) throw invalid(details)
      config = sealConfig(k, type, merged, cur.id) as Record<string, unknown>
    }
    return await credentials.update(q, input.id, { name: fields.name, type, config }, input.ifMatch)
  })
  deps.effects.changed(caller, { resource_kind: 'credential', credential_id: after.id, operation: 'updated' })
  return masked(after)
}

export async function deleteCredentialOp (deps: OperationDeps, caller: Caller, input: RecordRef): Promise<CredentialRecord> {
  const c = await deps.store.tx(async q => await credentials.remove(q, input.id, input.ifMatch))
  deps.effects.changed(caller, { resource_kind: 'credential', credential_id: c.id, operation: 'deleted' })
  return c
}
