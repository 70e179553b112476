/** imap_trigger: runs once for every new unseen email (src/main/triggers/imap.ts watches the mailbox). */
import { passTrigger, required, text, trigger } from './describe.js'
import type { NodeType } from './node-type.js'

export const imapTrigger: NodeType = {
  description: trigger('imap_trigger', 'Runs once for every new unseen email in a mailbox (one instance owns the mailbox; IDLE where offered, polling otherwise).', {
    credentials_id: required('id of the imap credential'),
    mailbox: text('mailbox to watch (default "Inbox")'),
    poll_interval_seconds: { type: 'integer', minimum: 1, maximum: 86_400, description: 'seconds between mailbox checks, 1 to 86400 (default 60; with IDLE a safety check)' },
    mark_as_seen: { type: 'boolean', description: 'mark processed emails as seen' }
  }, ['credentials_id'], '{subject, from, to, date, body_text, body_html (decoded, each at most 1 MiB), uid, mailbox, run_id}'),
  run: passTrigger,
  startedBy: 'itself'
}
