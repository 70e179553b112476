import type { Migration } from './index.js'

export const m010BrokerTriggerState: Migration = {
  version: 10,
  name: 'broker trigger state',
  sql: `
-- Per Kafka trigger, consumer group and partition: the highest offset whose run is over, and the
-- offset being run now with its owner's lease. A message is run once across instances: one that
-- arrives again after a rebalance is skipped when done, and waits while its first owner's lease
-- is fresh. Offsets are Kafka int64 values kept as text and compared as numeric.
CREATE TABLE broker_trigger_state (
  proxy_id text NOT NULL REFERENCES proxies(id) ON DELETE CASCADE,
  consumer_group text NOT NULL,
  topic text NOT NULL,
  partition integer NOT NULL,
  done_offset text,
  running_offset text,
  owner text,
  lease_until timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (proxy_id, consumer_group, topic, partition)
);
`
}
