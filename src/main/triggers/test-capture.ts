/**
 * Test-listen for the triggers that do not come through the gateway: produce
 * one trigger output the way the production trigger would, without its side
 * effects, for the builder to run (mode test).
 *   cron_trigger     fires once at once
 *   imap_trigger     opens the mailbox read-only, waits for the first unseen email
 *                    (one already there counts), reads it with BODY.PEEK
 *   broker_consumer  consumes with a throwaway group from the latest offset: the next message
 */
import { randomUUID } from 'node:crypto'
import { badRequest } from '../../common/errors.js'
import type { WorkflowNode } from '../../common/types.js'
import { imapFailureMessage } from '../credentials/imap-validate.js'
import { cronPattern } from './cron.js'
import type { CredentialLoader } from './credentials.js'
import { decodeEmail, MAX_SOURCE_BYTES } from './email.js'
import { imapSettings, triggerClient } from './imap.js'
import { firstMessage } from './broker.js'

/**
 * Resolves with the trigger output; `connected` is called once the trigger's server took the
 * listen (the broker subscribed), so that the listen route can answer a connection failure itself.
 */
export type CaptureTrigger = (node: WorkflowNode, signal: AbortSignal, connected?: () => void) => Promise<Record<string, unknown>>

/** Throws a 400 at once for a trigger that cannot be listened to; otherwise the capture starts. */
export function triggerCapture (deps: { credential: CredentialLoader }): CaptureTrigger {
  return async (node, signal, connected) => {
    if (node.type === 'cron_trigger') {
      const { expression, timezone, cron } = cronPattern(node.settings)
      cron.stop()
      return { triggered_at: new Date().toISOString(), trigger: 'cron', schedule: expression, timezone, run_id: randomUUID() }
    }
    if (node.type === 'imap_trigger') return await firstUnseen(node, signal, deps.credential)
    if (node.type === 'broker_consumer') return await firstMessage(node.settings, signal, deps.credential, connected)
    throw badRequest(`Test-listen is available for http_trigger, cron_trigger, imap_trigger and broker_consumer workflows, not ${node.type}.`)
  }
}

async function firstUnseen (node: WorkflowNode, signal: AbortSignal, credential: CredentialLoader): Promise<Record<string, unknown>> {
  const s = imapSettings(node.settings)
  const config = await credential(node.settings.credentials_id, 'imap')
  const client = triggerClient(config)
  const stop = () => { client.close() }
  signal.addEventListener('abort', stop, { once: true })
  try {
    await client.connect().catch((err: unknown) => { throw new Error(imapFailureMessage(err, 'connect', config)) })
    await client.mailboxOpen(s.mailbox, { readOnly: true }).catch((err: unknown) => { throw new Error(imapFailureMessage(err, 'mailbox', { ...config, mailbox: s.mailbox })) })
    let woken: () => void = () => {}
    client.on('exists', () => { woken() })
    // Bounded: the listen's own timeout aborts the signal, which closes the connection.
    while (!signal.aborted) {
      const found = await client.search({ seen: false }, { uid: true })
      const uid = (found === false || found === undefined ? [] : found).sort((a, b) => a - b)[0]
      if (uid !== undefined) {
        const msg = await client.fetchOne(String(uid), { uid: true, source: { maxLength: MAX_SOURCE_BYTES } }, { uid: true })
        if (msg !== false && msg.source !== undefined) return { ...await decodeEmail(msg.source, uid, s.mailbox), run_id: randomUUID() }
      }
      if (client.capabilities.has('IDLE')) client.idle().catch(() => {})
      await new Promise<void>(resolve => {
        const timer = setTimeout(done, Math.min(s.pollMs, 5000))
        function done (): void { clearTimeout(timer); resolve() }
        woken = done
        signal.addEventListener('abort', done, { once: true })
      })
    }
    throw new Error('The listen ended before an unseen email arrived.')
  } finally {
    signal.removeEventListener('abort', stop)
    client.close()
  }
}
