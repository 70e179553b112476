import type { Migration } from './index.js'

/**
 * Trace ids beside request ids: a request log record and an execution record name the trace
 * they belong to (null when tracing is off), and the request log finds a trace's requests by
 * an index that holds only traced rows.
 */
export const m017TraceIds: Migration = {
  version: 17,
  name: 'trace ids in the request log and execution records',
  sql: `
ALTER TABLE executions ADD COLUMN trace_id text;
ALTER TABLE request_logs ADD COLUMN trace_id text;
CREATE INDEX request_logs_trace_idx ON request_logs (trace_id) WHERE trace_id IS NOT NULL;
`,
  // The embedded store keeps its request log in files (observability/request-log-files.ts).
  embeddedSql: `
ALTER TABLE executions ADD COLUMN trace_id text;
ALTER TABLE request_logs ADD COLUMN trace_id text;
`
}
