/**
 * imap_trigger: one owner per trigger across instances, every new unseen email
 * run once.
 *
 *   every instance: acquire lock `imap:<proxy>` ──no──▶ standby, retry every second
 *        │ yes (renewed every 2 s; lost renewal = stop owning)
 *        ▼
 *   fence = takeImapFence(store)  (a newer owner's token makes our writes no-ops)
 *   connect, open mailbox ── UIDVALIDITY changed? ── mark = UIDNEXT-1 (nothing old runs again)
 *        ▼
 *   loop: UID SEARCH unseen UIDs > mark ──▶ claimImapUid(fence, uid) ──▶ fetch, decode ──▶ run
 *         wait for IDLE's EXISTS (or the poll interval without IDLE)
 *
 * The UID claim is stored before the run, so a run happens at most once per
 * email, across restarts and owner changes. A failed connection or login is
 * reported as `failing` and retried with backoff; the lock is released so
 * another instance may try.
 */
import { randomUUID } from 'node:crypto'
import type { ImapFlow } from 'imapflow'
import { loadImapflow } from '../lazy-require.js'
import type { LockManager } from '../cache/types.js'
import { imapFailureMessage, imapFlowOptions } from '../credentials/imap-validate.js'
import { claimImapUid, holdsImapFence, takeImapFence } from '../store/imap-trigger-state.js'
import type { Store } from '../store/types.js'
import type { CredentialLoader } from './credentials.js'
import { decodeEmail, MAX_SOURCE_BYTES } from './email.js'
import type { StartTrigger, TriggerScope } from './types.js'

const LOCK_TTL_MS = 6000
const RENEW_MS = 2000
const STANDBY_RETRY_MS = 1000
const MAX_BACKOFF_MS = 30_000
const IO_TIMEOUT_MS = 30_000

export interface ImapSettings { mailbox: string, pollMs: number, markSeen: boolean }

export function imapSettings (settings: Record<string, unknown>): ImapSettings {
  const mailbox = typeof settings.mailbox === 'string' && settings.mailbox !== '' ? settings.mailbox : 'Inbox'
  const seconds = Number(settings.poll_interval_seconds ?? 60)
  return { mailbox, pollMs: (Number.isFinite(seconds) && seconds > 0 ? seconds : 60) * 1000, markSeen: settings.mark_as_seen === true }
}

/** An IMAP client for a trigger: bounded waits, errors never thrown at the process, no auto-IDLE (we decide). */
export function triggerClient (config: Parameters<typeof imapFlowOptions>[0]): ImapFlow {
  const { ImapFlow } = loadImapflow()
  const client = new ImapFlow({ ...imapFlowOptions(config, { timeoutMs: IO_TIMEOUT_MS }), disableAutoIdle: true })
  client.on('error', () => {})
  return client
}

/** Sleeps until `ms` pass, `wake()` is called, or the signal aborts. */
function napper (signal: AbortSignal) {
  let wake: (() => void) | null = null
  return {
    wake: () => { wake?.() },
    sleep: async (ms: number) => await new Promise<void>(resolve => {
      const done = () => { clearTimeout(timer); signal.removeEventListener('abort', done); wake = null; resolve() }
      const timer = setTimeout(done, Math.max(0, ms))
      wake = done
      signal.addEventListener('abort', done, { once: true })
    })
  }
}

export function imapTrigger (deps: { store: Store, locks: LockManager, credential: CredentialLoader }): StartTrigger {
  return scope => {
    const s = imapSettings(scope.node.settings)
    const lockName = `imap:${scope.proxy.id}`
    const owner = `${scope.instanceId}:${randomUUID()}`
    const nap = napper(scope.signal)
    let client: ImapFlow | null = null

    const done = (async () => {
      let backoff = 1000
      while (!scope.signal.aborted) {
        scope.beat()
        if (!await deps.locks.acquire(lockName, LOCK_TTL_MS, owner)) { scope.standby(); await nap.sleep(STANDBY_RETRY_MS); continue }
        try {
          await own(scope, s, deps, owner, lockName, nap, c => { client = c })
          backoff = 1000
        } catch (err) {
          if (scope.signal.aborted) break
          scope.failing(err)
          await deps.locks.release(lockName, owner)
          await nap.sleep(backoff)
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
        } finally {
          (client as ImapFlow | null)?.close()
          client = null
        }
      }
      await deps.locks.release(lockName, owner)
    })()

    return {
      async stop () {
        (client as ImapFlow | null)?.close()
        nap.wake()
        await done
      }
    }
  }
}

/** Owns the mailbox until the lock or the fence is lost, or the trigger stops; throws on connection problems. */
async function own (scope: TriggerScope, s: ImapSettings, deps: { store: Store, locks: LockManager, credential: CredentialLoader }, owner: string, lockName: string,
  nap: ReturnType<typeof napper>, setClient: (c: ImapFlow) => void): Promise<void> {
  const proxyId = scope.proxy.id
  const config = await deps.credential(scope.node.settings.credentials_id, 'imap')
  const mark = await takeImapFence(deps.store, proxyId, s.mailbox)
  const fence = mark.fence
  const client = triggerClient(config)
  setClient(client)
  let lost = false
  client.on('exists', () => { nap.wake() })
  client.on('close', () => { nap.wake() })
  // Renewal runs beside the loop, so a long workflow run never lets the lease lapse unnoticed.
  const renew = setInterval(() => {
    deps.locks.renew(lockName, LOCK_TTL_MS, owner).then(ok => { if (!ok) { lost = true; nap.wake() } }, () => { lost = true; nap.wake() })
  }, RENEW_MS)
  try {
    await client.connect().catch((err: unknown) => { throw new Error(imapFailureMessage(err, 'connect', config)) })
    const box = await client.mailboxOpen(s.mailbox).catch((err: unknown) => { throw new Error(imapFailureMessage(err, 'mailbox', { ...config, mailbox: s.mailbox })) })
    const uidValidity = String(box.uidValidity)
    let last = mark.last_uid
    if (mark.uid_validity !== null && mark.uid_validity !== uidValidity) {
      // Every UID was renumbered: take what is in the mailbox now as already seen, so nothing runs twice.
      last = Math.max(0, Number(box.uidNext) - 1)
      if (!await claimImapUid(deps.store, proxyId, s.mailbox, fence, uidValidity, last)) return
    }
    const idle = client.capabilities.has('IDLE')
    scope.healthy({ owner: scope.instanceId })
    let nextCheck = 0
    let woken = true
    const wake = () => { woken = true }
    client.on('exists', wake)
    while (!scope.signal.aborted && !lost) {
      if (!client.usable) throw new Error(`The connection to the IMAP server ${config.host}:${config.port} closed.`)
      if (woken || Date.now() >= nextCheck) {
        woken = false
        nextCheck = Date.now() + s.pollMs
        const found = await client.search({ uid: `${last + 1}:*`, seen: false }, { uid: true })
        // `n:*` also matches the newest message when n is past the end: keep only new UIDs.
        const uids = (found === false || found === undefined ? [] : found).filter(u => u > last).sort((a, b) => a - b)
        for (const uid of uids) {
          if (scope.signal.aborted || lost) break
          if (!await claimImapUid(deps.store, proxyId, s.mailbox, fence, uidValidity, uid)) {
            if (!await holdsImapFence(deps.store, proxyId, s.mailbox, fence)) return
            last = Math.max(last, uid)
            continue
          }
          last = uid
          const msg = await client.fetchOne(String(uid), { uid: true, source: { maxLength: MAX_SOURCE_BYTES } }, { uid: true })
          if (msg === false || msg.source === undefined) continue
          const email = await decodeEmail(msg.source, uid, s.mailbox)
          if (s.markSeen) await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true })
          await scope.run({ ...email })
        }
      }
      scope.beat()
      if (idle && !client.idling) client.idle().catch(() => {})
      await nap.sleep(Math.min(RENEW_MS, nextCheck - Date.now()))
    }
  } finally {
    clearInterval(renew)
    client.close()
  }
}
