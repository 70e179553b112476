/**
 * Encryption of credential secrets at rest: AES-256-GCM with a fresh 96-bit IV
 * per value. A sealed value is one ASCII string:
 *
 *   v2:<key id>:<iv b64>:<auth tag b64>:<ciphertext b64>
 *
 * The key id (first 4 bytes of SHA-256 of the key, hex) lets a wrong key be told
 * apart from tampered data, and leaves room for key rotation. The optional
 * `context` (the field) and, in v2, the record's id are bound as additional
 * authenticated data, so a sealed value copied into another field or another
 * record does not decrypt there. v1 values (field only) are still read, and are
 * re-sealed as v2 at start (resealLegacy in server.ts).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import { createOnce } from '../config/data-dir-file.js'
import path from 'node:path'

const VERSION = 'v1'
const BOUND = 'v2'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
export const KEY_FILE_NAME = 'secrets.key'

/** Raised when a sealed value cannot be opened. Its message never holds the value or the key. */
export class SecretDecryptError extends Error {
  readonly code: 'secret_wrong_key' | 'secret_corrupt'
  constructor (code: SecretDecryptError['code'], message: string) {
    super(message)
    this.name = 'SecretDecryptError'
    this.code = code
  }
}

export function keyId (key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8)
}

function decodeKey (b64: string, origin: string): Buffer {
  const trimmed = b64.trim()
  const key = Buffer.from(trimmed, 'base64')
  // Buffer.from ignores bad characters: re-encode to reject anything that is not clean base64.
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) {
    throw new Error(`${origin} must be the base64 encoding of exactly ${KEY_BYTES} random bytes (for example the output of: openssl rand -base64 32).`)
  }
  return key
}

/**
 * The key that seals credential secrets: `secretsKey` (base64 of 32 bytes) when
 * set, otherwise `<dataDir>/secrets.key`, created with mode 0600 on first use and
 * reused afterwards. Losing that file makes stored secrets unreadable.
 */
export async function loadSecretsKey (opts: { secretsKey: string, dataDir: string }): Promise<Buffer> {
  if (opts.secretsKey.trim() !== '') return decodeKey(opts.secretsKey, 'SECRETS_KEY')
  const file = path.join(opts.dataDir, KEY_FILE_NAME)
  try {
    return decodeKey(await readFile(file, 'utf8'), `The key file ${file}`)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  await mkdir(opts.dataDir, { recursive: true })
  // If another process created the file meanwhile, its key is used.
  const text = await createOnce(file, randomBytes(KEY_BYTES).toString('base64') + '\n', 0o600)
  return decodeKey(text, `The key file ${file}`)
}

/**
 * Stops a start whose key cannot open the stored secrets (a wrong or lost SECRETS_KEY, another
 * DATA_DIR's key file): better a clear line now than a ready instance whose credentials all fail.
 * `sealed` are sample values from the store (any JSON text holding sealed strings).
 */
export function checkKeyMatches (key: Buffer, sealed: readonly string[]): void {
  const ids = new Set<string>()
  for (const text of sealed) for (const m of text.matchAll(/\bv[12]:([0-9a-f]{8}):/g)) ids.add(m[1]!) // group 1 always takes part
  if (ids.size === 0 || ids.has(keyId(key))) return
  throw new Error(`The stored credential secrets were sealed with another key (key id ${[...ids].join(', ')}; the configured key is ${keyId(key)}): ` +
    'set SECRETS_KEY to the key they were made with, or restore secrets.key in DATA_DIR.')
}

/** Seals one secret string; `context` (e.g. "imap.password") must be given again to open it. */
export function encryptSecret (key: Buffer, plaintext: string, context = '', record?: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(record === undefined ? context : `${context}@${record}`, 'utf8'))
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [record === undefined ? VERSION : BOUND, keyId(key), iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':')
}

export function isSealed (value: unknown): value is string {
  return typeof value === 'string' && (value.startsWith(VERSION + ':') || value.startsWith(BOUND + ':')) && value.split(':').length === 5
}

/** Opens a value made by `encryptSecret`; throws SecretDecryptError on a wrong key or altered data. */
export function decryptSecret (key: Buffer, sealed: string, context = '', record?: string): string {
  const parts = sealed.split(':')
  if (parts.length !== 5 || (parts[0] !== VERSION && parts[0] !== BOUND)) {
    throw new SecretDecryptError('secret_corrupt', 'A stored secret is not in a known encrypted format.')
  }
  // A v2 value opens only in its own record; a v1 value (before records were bound) in its field.
  const aad = parts[0] === BOUND ? `${context}@${record ?? ''}` : context
  const [, kid, ivB64, tagB64, ctB64] = parts as [string, string, string, string, string]
  if (kid !== keyId(key)) {
    throw new SecretDecryptError('secret_wrong_key',
      `A stored secret was encrypted with another key (key id ${kid}, the configured key is ${keyId(key)}); set SECRETS_KEY or restore the key file it was made with.`)
  }
  const iv = Buffer.from(ivB64, 'base64')
  const tag = Buffer.from(tagB64, 'base64')
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new SecretDecryptError('secret_corrupt', 'A stored secret is damaged and cannot be decrypted.')
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(Buffer.from(ctB64, 'base64')), decipher.final()]).toString('utf8')
  } catch {
    // GCM authentication failed: altered ciphertext, tag, IV or context.
    throw new SecretDecryptError('secret_corrupt', 'A stored secret is damaged and cannot be decrypted.')
  }
}
