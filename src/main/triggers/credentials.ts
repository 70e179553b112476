/** Opens a stored credential's config (secrets decrypted) for a trigger that connects with it. */
import { openConfig } from '../credentials/secret-fields.js'
import type { CredentialConfigs } from '../credentials/types.js'
import { credentials } from '../store/access.js'
import type { Store } from '../store/types.js'

export type CredentialLoader = <T extends 'imap' | 'kafka'>(id: unknown, type: T) => Promise<CredentialConfigs[T]>

export function credentialLoader (store: Store, secretsKey: Buffer): CredentialLoader {
  return async (id, type) => {
    if (typeof id !== 'string' || id === '') throw new Error(`The trigger has no credentials_id; choose a ${type} credential.`)
    const c = await credentials.get(store, id).catch(() => { throw new Error(`Credential '${id}' does not exist; choose a ${type} credential.`) })
    if (c.type !== type) throw new Error(`Credential '${c.name}' is of type ${c.type}; this trigger needs a ${type} credential.`)
    return openConfig(secretsKey, type, c.config, c.id) as unknown as CredentialConfigs[typeof type]
  }
}
