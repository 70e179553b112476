import type { Migration } from './index.js'

/** What the gateway does to answers: a collection's CORS, a proxy's response cache and compression switch. */
export const m013ResponseSettings: Migration = {
  version: 13,
  name: 'cors, response cache and compression settings',
  sql: `
ALTER TABLE collections ADD COLUMN cors jsonb;
ALTER TABLE proxies ADD COLUMN cache jsonb;
ALTER TABLE proxies ADD COLUMN compression boolean NOT NULL DEFAULT true;
`
}
