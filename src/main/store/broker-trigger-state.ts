/**
 * What a Kafka trigger has run, per proxy, consumer group, topic and partition, kept in the store
 * so that a message is run once across instances and restarts (migration 010). Within a partition
 * the group delivers in order to one consumer at a time, so the highest finished offset and the
 * one in progress describe everything.
 */
import type { Store } from './types.js'

export interface BrokerPartitionKey { proxyId: string, group: string, topic: string, partition: number }

/** run: this owner runs it now; done: already run (skip it); busy: another owner runs it under a fresh lease. */
export type BrokerClaim = 'run' | 'done' | 'busy'

const KEY = 'proxy_id = $1 AND consumer_group = $2 AND topic = $3 AND partition = $4'
const keyParams = (k: BrokerPartitionKey) => [k.proxyId, k.group, k.topic, k.partition]

export async function claimBrokerOffset (store: Store, k: BrokerPartitionKey, offset: string, owner: string, leaseMs: number): Promise<BrokerClaim> {
  return await store.tx(async q => {
    await q.query('INSERT INTO broker_trigger_state (proxy_id, consumer_group, topic, partition) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', keyParams(k))
    const { rows } = await q.query<{ done_offset: string | null, running_offset: string | null, owner: string | null, fresh: boolean }>(
      `SELECT done_offset, running_offset, owner, lease_until > now() AS fresh FROM broker_trigger_state WHERE ${KEY} FOR UPDATE`, keyParams(k))
    const row = rows[0]
    // The INSERT above made the row if it was missing, in this transaction.
    if (row === undefined) throw new Error(`broker_trigger_state has no row for ${k.topic}/${k.partition} after inserting it`)
    if (row.done_offset !== null && BigInt(row.done_offset) >= BigInt(offset)) return 'done'
    if (row.running_offset === offset && row.owner !== owner && row.fresh === true) return 'busy'
    await q.query(`UPDATE broker_trigger_state SET running_offset = $5, owner = $6, lease_until = now() + make_interval(secs => $7), updated_at = now() WHERE ${KEY}`,
      [...keyParams(k), offset, owner, leaseMs / 1000])
    return 'run'
  })
}

/** Extends the lease while the run goes on; false when another owner has taken the offset over. */
export async function renewBrokerLease (store: Store, k: BrokerPartitionKey, offset: string, owner: string, leaseMs: number): Promise<boolean> {
  const r = await store.query(`UPDATE broker_trigger_state SET lease_until = now() + make_interval(secs => $7), updated_at = now()
    WHERE ${KEY} AND running_offset = $5::text AND owner = $6`, [...keyParams(k), offset, owner, leaseMs / 1000])
  return r.rowCount === 1
}

/** The offset's run is over (whatever its result): later deliveries of it are skipped. */
export async function finishBrokerOffset (store: Store, k: BrokerPartitionKey, offset: string): Promise<void> {
  await store.query(`UPDATE broker_trigger_state SET done_offset = $5,
      running_offset = CASE WHEN running_offset = $5::text THEN NULL ELSE running_offset END,
      owner = CASE WHEN running_offset = $5::text THEN NULL ELSE owner END,
      lease_until = CASE WHEN running_offset = $5::text THEN NULL ELSE lease_until END, updated_at = now()
    WHERE ${KEY} AND (done_offset IS NULL OR done_offset::numeric < $5::text::numeric)`, [...keyParams(k), offset])
}
