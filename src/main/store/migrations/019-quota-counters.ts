import type { Migration } from './index.js'

/**
 * Quota counters of the memory cache, kept across restarts (CACHE_TYPE=memory): one row per
 * quota key and calendar period, summed from every instance's increments; rows past their
 * period are removed at start.
 */
export const m019QuotaCounters: Migration = {
  version: 19,
  name: 'quota counters',
  sql: `
CREATE TABLE quota_counters (
  key text NOT NULL,
  stamp text NOT NULL,
  count integer NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, stamp)
);
`
}
