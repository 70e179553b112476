import type { Migration } from './index.js'

/**
 * The per-client index of the request log holds only the rows that have a client. A request to
 * an open proxy (no client) paid for an entry of it all the same; now it pays for none. A filter
 * `client_id = …` still reads the index (an equality implies the value is not null). About 1.5 µs
 * of PostgreSQL's CPU per open request (node bench/request-log-rows.mjs).
 * The embedded store has no such index (migration 11) and keeps its request log in files.
 */
export const m012RequestLogClientIndex: Migration = {
  version: 12,
  name: 'request log client index without open requests',
  sql: `
DROP INDEX IF EXISTS request_logs_client_idx;
CREATE INDEX request_logs_client_idx ON request_logs (client_id, seq) WHERE client_id IS NOT NULL;
`,
  embeddedSql: 'SELECT 1'
}
