import type { Migration } from './index.js'

/**
 * A collection's `upstream` object (targets, balancing, health checks, retries). Null on rows
 * written before it existed: they read as one target, their `upstream_url`, which stays the
 * first target's URL so older readers of the column still find a backend.
 */
export const m015CollectionUpstream: Migration = {
  version: 15,
  name: 'collection upstream targets',
  sql: 'ALTER TABLE collections ADD COLUMN upstream jsonb;'
}
