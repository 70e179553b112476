import type { Migration } from './index.js'

export const m005ProxyBodyLimit: Migration = {
  version: 5,
  name: 'per-proxy request body limit',
  sql: 'ALTER TABLE proxies ADD COLUMN max_body_bytes integer;'
}
