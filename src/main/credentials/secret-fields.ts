/**
 * Operations on the secret fields of a credential config (SECRET_FIELDS):
 * masking for reads, keeping stored secrets on update, and sealing/opening
 * for storage. Every function returns a new object and leaves its input alone.
 *
 *   API in  --mergeForUpdate--> plain --sealConfig--> stored (secrets sealed)
 *   API out <--maskConfig------ stored or plain
 *   runtime <--openConfig------ stored
 */
import { SECRET_FIELDS, SECRET_MASK, type CredentialType } from './types.js'
import { decryptSecret, encryptSecret } from './secrets.js'

type Json = Record<string, unknown>

export function getPath (obj: unknown, dotted: string): unknown {
  let cur = obj
  for (const k of dotted.split('.')) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, k)) return undefined
    cur = (cur as Json)[k]
  }
  return cur
}

/** Sets or deletes (value undefined) a dotted path that already leads through objects; never creates parents. */
export function setPath (obj: Json, dotted: string, value: unknown): void {
  const keys = dotted.split('.')
  const parent = keys.length === 1 ? obj : getPath(obj, keys.slice(0, -1).join('.'))
  if (typeof parent !== 'object' || parent === null) return
  const last = keys[keys.length - 1]!
  if (value === undefined) delete (parent as Json)[last]
  else (parent as Json)[last] = value
}

function mapSecrets (type: CredentialType, config: unknown, fn: (value: string, path: string) => unknown): Json {
  const out = structuredClone(config ?? {}) as Json
  for (const p of SECRET_FIELDS[type] ?? []) {
    const v = getPath(out, p)
    if (typeof v === 'string') setPath(out, p, fn(v, p))
  }
  return out
}

/** A copy of `config` with every secret field that holds a value replaced by "********". */
export function maskConfig (type: CredentialType, config: unknown): Json {
  return mapSecrets(type, config, () => SECRET_MASK)
}

/**
 * The config to store on update: `incoming` as sent, except that a secret
 * field holding the mask takes the stored value (`stored` is the plain, opened
 * config). A mask with nothing stored at that path is dropped, so validation
 * then reports the field as required. A secret left out of `incoming` is removed.
 */
export function mergeForUpdate (type: CredentialType, stored: unknown, incoming: unknown): Json {
  return mapSecrets(type, incoming, (v, p) => {
    if (v !== SECRET_MASK) return v
    const kept = getPath(stored, p)
    return typeof kept === 'string' && kept !== SECRET_MASK ? kept : undefined
  })
}

/** A copy of a plain config with each secret field encrypted (the field path is bound to its ciphertext). */
export function sealConfig (key: Buffer, type: CredentialType, config: unknown, record?: string): Json {
  return mapSecrets(type, config, (v, p) => encryptSecret(key, v, `${type}.${p}`, record))
}

/** The plain config from a sealed one; throws SecretDecryptError (no secret in its message) on a wrong key or damage. */
export function openConfig (key: Buffer, type: CredentialType, sealed: unknown, record?: string): Json {
  return mapSecrets(type, sealed, (v, p) => decryptSecret(key, v, `${type}.${p}`, record))
}
