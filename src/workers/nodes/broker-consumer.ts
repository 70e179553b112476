/** broker_consumer: runs for every message consumed from a topic (src/main/triggers/broker.ts consumes). */
import { passTrigger, required, text, trigger } from './describe.js'
import type { NodeType } from './node-type.js'

export const brokerConsumer: NodeType = {
  description: trigger('broker_consumer', 'Runs for every message consumed from a broker topic.', {
    credentials_id: required('id of the broker credential'),
    topic: required('topic to consume'),
    consumer_group: text('consumer group shared by the instances (default: gatehouse-<proxy id>)'),
    enabled: { type: 'boolean', description: 'false stops consuming' },
    commit_mode: { type: 'string', enum: ['after_success', 'per_message'], description: 'after_success (default): an offset is committed once its run succeeded (a failed run is retried, 3 runs in all, then reported and committed); per_message: committed after every run' },
    poll_timeout_ms: { type: 'integer', minimum: 1, maximum: 600_000, description: 'an integer from 1 to 600000' }
  }, ['credentials_id', 'topic'], '{topic, partition, offset, key, message, headers, run_id}'),
  run: passTrigger,
  startedBy: 'itself'
}
