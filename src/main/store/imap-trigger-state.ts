/**
 * What an IMAP trigger has already run, kept in the store so that it survives
 * restarts and owner changes: per proxy and mailbox, the UIDVALIDITY and the
 * highest UID claimed, guarded by the owner's fencing token.
 */
import type { Store } from './types.js'

export interface ImapMark { uid_validity: string | null, last_uid: number }

/** Starts a new ownership: bumps the fencing token and answers it with the current mark. */
export async function takeImapFence (store: Store, proxyId: string, mailbox: string): Promise<{ fence: number } & ImapMark> {
  return await store.tx(async q => {
    await q.query('INSERT INTO imap_trigger_state (proxy_id, mailbox) VALUES ($1, $2) ON CONFLICT DO NOTHING', [proxyId, mailbox])
    const r = await q.query('UPDATE imap_trigger_state SET fence = fence + 1, updated_at = now() WHERE proxy_id = $1 AND mailbox = $2 RETURNING fence, uid_validity, last_uid', [proxyId, mailbox])
    const row = r.rows[0]
    return { fence: Number(row.fence), uid_validity: row.uid_validity ?? null, last_uid: Number(row.last_uid) }
  })
}

/**
 * Claims `uid` (and resets the mark on a new UIDVALIDITY) when `fence` is still the newest token
 * and the UID is beyond the mark. False: another owner took over, or the UID was already claimed.
 */
export async function claimImapUid (store: Store, proxyId: string, mailbox: string, fence: number, uidValidity: string, uid: number): Promise<boolean> {
  const r = await store.query(`UPDATE imap_trigger_state SET uid_validity = $4, last_uid = $5, updated_at = now()
    WHERE proxy_id = $1 AND mailbox = $2 AND fence = $3 AND (uid_validity IS DISTINCT FROM $4 OR last_uid < $5)`,
  [proxyId, mailbox, fence, uidValidity, uid])
  return r.rowCount === 1
}

/** Is `fence` still the newest token? */
export async function holdsImapFence (store: Store, proxyId: string, mailbox: string, fence: number): Promise<boolean> {
  const r = await store.query('SELECT 1 FROM imap_trigger_state WHERE proxy_id = $1 AND mailbox = $2 AND fence = $3', [proxyId, mailbox, fence])
  return r.rows.length === 1
}
