import type { Migration } from './index.js'

/**
 * The assistant's tool calls in the audit log: a third source, `assistant`, and the tool's name.
 * The source's CHECK is the one PostgreSQL named after its column when migration 3 created it.
 */
export const m014AuditAssistant: Migration = {
  version: 14,
  name: 'audit log: assistant tool calls',
  sql: `
ALTER TABLE audit_logs DROP CONSTRAINT IF EXISTS audit_logs_source_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_source_check CHECK (source IN ('rest', 'mcp', 'assistant'));
ALTER TABLE audit_logs ADD COLUMN tool text;
`
}
