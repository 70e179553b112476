import type { Migration } from './index.js'

/**
 * Changes made by loading CONFIG_FILE (at start and on SIGHUP) in the audit log: a fourth
 * source, `config_file`, instead of `rest`. The CHECK is the one migration 14 recreated.
 */
export const m020AuditConfigFile: Migration = {
  version: 20,
  name: 'audit log: CONFIG_FILE source',
  sql: `
ALTER TABLE audit_logs DROP CONSTRAINT IF EXISTS audit_logs_source_check;
ALTER TABLE audit_logs ADD CONSTRAINT audit_logs_source_check CHECK (source IN ('rest', 'mcp', 'assistant', 'config_file'));
`
}
