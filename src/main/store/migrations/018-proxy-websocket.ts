import type { Migration } from './index.js'

/** A proxy that relays WebSocket upgrades to its collection's upstream. */
export const m018ProxyWebsocket: Migration = {
  version: 18,
  name: 'proxy websocket switch',
  sql: 'ALTER TABLE proxies ADD COLUMN websocket boolean NOT NULL DEFAULT false;'
}
