/**
 * Start-up checks of the secrets already in the store: the configured key must open them, and
 * values sealed by an older version are sealed again, bound to their records.
 */
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import { checkKeyMatches, decryptSecret, encryptSecret } from '../credentials/secrets.js'
import { openConfig, sealConfig } from '../credentials/secret-fields.js'
import type { CredentialType } from '../credentials/types.js'

/**
 * Secrets sealed before they were bound to their record (v1) are sealed again bound to it (v2),
 * so a value copied into another record no longer opens there. Idempotent; concurrent starts
 * re-seal the same value at worst twice. A value that does not open is left for its route to report.
 */
export async function resealLegacySecrets (store: Store, key: Buffer, logger: Logger): Promise<void> {
  let done = 0
  try {
    const { rows: ps } = await store.query<{ id: string, auth_type: string, secret_sealed: string }>("SELECT id, auth_type, secret_sealed FROM profiles WHERE secret_sealed LIKE 'v1:%'")
    for (const p of ps) {
      const context = p.auth_type === 'api_key' ? 'profile.api_key' : 'profile.jwt_secret'
      let plain: string
      try { plain = decryptSecret(key, p.secret_sealed, context) } catch { continue }
      await store.query('UPDATE profiles SET secret_sealed = $2 WHERE id = $1 AND secret_sealed = $3', [p.id, encryptSecret(key, plain, context, p.id), p.secret_sealed])
      done++
    }
    const { rows: cs } = await store.query<{ id: string, type: string, config: unknown }>("SELECT id, type, config FROM credentials WHERE config::text LIKE '%\"v1:%'")
    for (const c of cs) {
      const config = typeof c.config === 'string' ? JSON.parse(c.config) : c.config
      let resealed: unknown
      try { resealed = sealConfig(key, c.type as CredentialType, openConfig(key, c.type as CredentialType, config), c.id) } catch { continue }
      await store.query('UPDATE credentials SET config = $2 WHERE id = $1', [c.id, JSON.stringify(resealed)])
      done++
    }
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'stored secrets could not be re-sealed to their records; retried at the next start')
    return
  }
  if (done > 0) logger.info({ records: done }, 'stored secrets re-sealed, bound to their records')
}

/** A few sealed values from the store, checked against the configured key (see checkKeyMatches). */
export async function checkStoredSecrets (store: Store, key: Buffer, logger: Logger): Promise<void> {
  let sample: string[]
  try {
    const { rows } = await store.query<{ t: string }>(`(SELECT secret_sealed AS t FROM profiles WHERE secret_sealed IS NOT NULL ORDER BY created_at DESC LIMIT 20)
      UNION ALL (SELECT config::text AS t FROM credentials ORDER BY created_at DESC LIMIT 20)`)
    sample = rows.map(r => r.t)
  } catch (err) {
    // The store went away just after opening: start degraded rather than not at all.
    logger.warn({ err: (err as Error).message }, 'the secrets key could not be checked against the store')
    return
  }
  checkKeyMatches(key, sample)
}
