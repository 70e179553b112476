import type { Migration } from './index.js'

/**
 * The request log takes a row per gateway request, so each index on it is paid per request.
 * Measured on the embedded store (PostgreSQL in WebAssembly, on a core the gateway shares):
 * about 7 µs of CPU per row per B-tree index, 34 µs a row with the three of migration 4 against
 * 19 µs with a BRIN on the time alone.
 *
 * - Both stores: the time index becomes a BRIN (rows arrive in time order, so a few pages
 *   summarise a day; pruning and since/until filters use it at almost no write cost).
 * - PostgreSQL keeps the per-proxy and per-client B-trees (its writes are native and off the
 *   gateway's process): a filter for a rarely called proxy stays an index lookup.
 * - The embedded store drops them: a proxy or client filter walks the log newest first through
 *   the sequence index and stops at a page, quick for any proxy that is called often, a scan
 *   for one that is not (the embedded store is for one instance; docs/operations.md).
 */
export const m011RequestLogIndexes: Migration = {
  version: 11,
  name: 'request log indexes cheap to write',
  sql: `
DROP INDEX IF EXISTS request_logs_time_idx;
CREATE INDEX request_logs_time_brin ON request_logs USING brin (occurred_at);
`,
  embeddedSql: `
DROP INDEX IF EXISTS request_logs_time_idx;
DROP INDEX IF EXISTS request_logs_proxy_idx;
DROP INDEX IF EXISTS request_logs_client_idx;
CREATE INDEX request_logs_time_brin ON request_logs USING brin (occurred_at);
`
}
