import type { Migration } from './index.js'

export const m009ConfigChanges: Migration = {
  version: 9,
  name: 'config changes',
  sql: `
-- One row per bump of config_state.version, naming what changed, so an instance that has applied
-- version N reads only the changes after N (O(changed)) instead of the whole configuration. Rows are
-- pruned behind the newest; an instance further behind than what is kept reloads everything.
-- kind: collection (the collection and all its proxies), proxy, access (profiles, clients, policies),
-- credential.
CREATE TABLE config_changes (
  version integer PRIMARY KEY,
  kind text NOT NULL,
  ref text NOT NULL
);
`
}
