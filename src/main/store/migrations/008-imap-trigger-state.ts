import type { Migration } from './index.js'

export const m008ImapTriggerState: Migration = {
  version: 8,
  name: 'imap trigger state',
  sql: `
-- Per IMAP trigger and mailbox: the highest UID already run (under its UIDVALIDITY) and the
-- fencing token of the current owner; a write with an older token changes nothing.
CREATE TABLE imap_trigger_state (
  proxy_id text NOT NULL REFERENCES proxies(id) ON DELETE CASCADE,
  mailbox text NOT NULL,
  uid_validity text,
  last_uid integer NOT NULL DEFAULT 0,
  fence integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (proxy_id, mailbox)
);
`
}
