/**
 * broker_consumer: a Kafka consumer per trigger (kafkajs), one per instance, all in one consumer
 * group, so the instances share the topic's partitions and the group rebalances when one goes.
 *
 *   connect ──▶ subscribe (a new group starts at the earliest offset: nothing produced before it is lost)
 *      ▼
 *   each message ──▶ run the workflow (through the proxy's mailbox) ──▶ commit offset+1
 *        commit_mode "after_success" (default): only a successful run commits; a failed run is
 *            retried (3 runs in all, with backoff), then reported as failing and committed, so one
 *            bad message cannot stop the partition for ever
 *        commit_mode "per_message": committed after the run whatever its result
 *   lost broker, rebalance ──▶ failing until kafkajs has rejoined the group (it restarts itself)
 *   a crash kafkajs gives up on ──▶ failing, a new consumer with backoff (1 s doubling to 30 s)
 *
 * Offsets are committed explicitly (no auto-commit), so a message is committed only once its run
 * is over: an instance that dies mid-run leaves it to be consumed again by the one that takes the
 * partition over. Kafka is tested against librdkafka's mock cluster (docs/workflows.md).
 */
import { parseTraceparent, type TraceContext } from '../../common/trace-context.js'
import { randomUUID } from 'node:crypto'
import type { Kafka, Consumer, EachMessagePayload, KafkaConfig as KafkaJsConfig, SASLOptions } from 'kafkajs'
import { badGateway } from '../../common/errors.js'
import { lazyRequire } from '../lazy-require.js'
import type { KafkaConfig } from '../credentials/types.js'
import { claimBrokerOffset, finishBrokerOffset, renewBrokerLease, type BrokerPartitionKey } from '../store/broker-trigger-state.js'
import type { Store } from '../store/types.js'
import type { CredentialLoader } from './credentials.js'
import type { StartTrigger, TriggerScope } from './types.js'

const loadKafkajs = lazyRequire<typeof import('kafkajs')>('kafkajs')

const MAX_BACKOFF_MS = 30_000
const ATTEMPTS = 3
const LAG_EVERY_MS = 5000
/** A consumer with no sign of life from kafkajs for this long is taken as stalled (the supervisor restarts it). */
const STALL_MS = 60_000
/** How long a message's claim holds without renewal: an instance that dies mid-run leaves it to another after this. */
const LEASE_MS = 15_000
/** Attempts to record a finished run (about 10 s of backoff in all). */
const FINISH_ATTEMPTS = 8

export interface BrokerSettings { topic: string, groupId: string, commitMode: 'after_success' | 'per_message', pollTimeoutMs: number }

export function brokerSettings (proxyId: string, settings: Record<string, unknown>): BrokerSettings {
  const topic = typeof settings.topic === 'string' ? settings.topic : ''
  const groupId = typeof settings.consumer_group === 'string' && settings.consumer_group !== '' ? settings.consumer_group : `gatehouse-${proxyId}`
  const commitMode = settings.commit_mode === 'per_message' ? 'per_message' : 'after_success'
  const poll = Number(settings.poll_timeout_ms ?? 1000)
  return { topic, groupId, commitMode, pollTimeoutMs: Number.isInteger(poll) && poll > 0 ? poll : 1000 }
}

/** kafkajs client options from a kafka credential (quiet: failures surface through trigger health). */
export function kafkaClient (c: KafkaConfig, clientSuffix = ''): Kafka {
  const { Kafka, logLevel } = loadKafkajs()
  const options: KafkaJsConfig = {
    clientId: `${c.client_id ?? 'gatehouse'}${clientSuffix}`,
    brokers: c.brokers,
    ssl: c.ssl === true,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 2000 },
    logLevel: logLevel.NOTHING
  }
  if (c.sasl !== undefined) options.sasl = { mechanism: c.sasl.mechanism, username: c.sasl.username, password: c.sasl.password } as SASLOptions
  return new Kafka(options)
}

/** The trigger output of one message: the spec's fields; a JSON value is parsed, else the text. */
/** W3C trace context from a message's headers (as producers instrumented with OpenTelemetry set them). */
function traceOf (headers: Record<string, string>): TraceContext | null {
  return parseTraceparent(headers.traceparent, headers.tracestate)
}

export function messageOutput (p: Pick<EachMessagePayload, 'topic' | 'partition' | 'message'>): Record<string, unknown> {
  const { message } = p
  const text = message.value === null ? null : message.value.toString('utf8')
  let value: unknown = text
  if (text !== null) { try { value = JSON.parse(text) } catch {} }
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(message.headers ?? {})) {
    if (v === undefined) continue
    headers[k] = Array.isArray(v) ? v.map(x => x.toString()).join(', ') : v.toString()
  }
  return { topic: p.topic, partition: p.partition, offset: message.offset, key: message.key === null || message.key === undefined ? null : message.key.toString('utf8'), message: value, headers }
}

const sleep = async (ms: number, signal: AbortSignal) => await new Promise<void>(resolve => {
  const done = () => { clearTimeout(timer); signal.removeEventListener('abort', done); resolve() }
  const timer = setTimeout(done, ms)
  signal.addEventListener('abort', done, { once: true })
})

export interface BrokerDeps { credential: CredentialLoader, store: Store }

export function brokerTrigger (deps: BrokerDeps): StartTrigger {
  return scope => {
    const s = brokerSettings(scope.proxy.id, scope.node.settings)
    let consumer: Consumer | null = null
    let wake: () => void = () => {}
    const done = (async () => {
      let backoff = 1000
      while (!scope.signal.aborted) {
        scope.beat()
        try {
          const crashed = await consume(scope, s, deps, c => { consumer = c })
          if (scope.signal.aborted) break
          throw crashed
        } catch (err) {
          if (scope.signal.aborted) break
          scope.failing(err)
          const c = consumer as Consumer | null
          consumer = null
          await c?.disconnect().catch(() => {})
          await new Promise<void>(resolve => { wake = resolve; void sleep(backoff, scope.signal).then(resolve) })
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
        }
      }
    })()
    return {
      async stop () {
        const c = consumer as Consumer | null
        wake()
        await c?.disconnect().catch(() => {})
        await done
      }
    }
  }
}

/** Consumes until the consumer crashes (resolves with the reason) or the trigger stops. */
async function consume (scope: TriggerScope, s: BrokerSettings, deps: BrokerDeps, setConsumer: (c: Consumer) => void): Promise<Error> {
  if (s.topic === '') throw new Error('The broker trigger has no topic.')
  const config = await deps.credential(scope.node.settings.credentials_id, 'kafka')
  const kafka = kafkaClient(config)
  // kafkajs's own restart after a crash is off: this loop restarts (and its timers end with the trigger).
  const consumer = kafka.consumer({ groupId: s.groupId, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 1000, maxWaitTimeInMs: s.pollTimeoutMs, retry: { retries: 2, restartOnFailure: async () => false } })
  setConsumer(consumer)
  // A retriable crash (lost broker, rebalance) is restarted by kafkajs itself: reported failing until
  // the group is joined again. Only a crash it gives up on ends this consumer (the caller starts anew).
  const crashed = new Promise<Error>(resolve => {
    consumer.on(consumer.events.CRASH, e => {
      const err = e.payload.error instanceof Error ? e.payload.error : new Error(String(e.payload.error))
      if (e.payload.restart === false) resolve(err)
      else scope.failing(err)
    })
  })
  consumer.on(consumer.events.GROUP_JOIN, () => { scope.healthy() })
  // Proof of life for the supervisor's stall check: the consumer is alive while kafkajs reports
  // anything (group heartbeats, fetches, rebalances, restarts) within STALL_MS; a rebalance may
  // legitimately take up to the session timeout, longer than the supervisor's own beat.
  let lastSign = Date.now()
  const sign = () => { lastSign = Date.now() }
  for (const ev of [consumer.events.HEARTBEAT, consumer.events.FETCH_START, consumer.events.REBALANCING, consumer.events.GROUP_JOIN, consumer.events.CONNECT, consumer.events.CRASH]) consumer.on(ev, sign)
  const alive = setInterval(() => { if (Date.now() - lastSign < STALL_MS) scope.beat() }, 500)
  const admin = kafka.admin()
  let lagTimer: NodeJS.Timeout | null = null
  try {
    await consumer.connect()
    await consumer.subscribe({ topic: s.topic, fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async p => {
        await handle(scope, s, p, deps.store)
        await consumer.commitOffsets([{ topic: p.topic, partition: p.partition, offset: String(BigInt(p.message.offset) + 1n) }])
      }
    })
    // Lag (messages not yet committed by the group), for trigger health; best effort.
    await admin.connect().catch(() => {})
    const measure = async () => {
      try {
        const [high, committed] = await Promise.all([admin.fetchTopicOffsets(s.topic), admin.fetchOffsets({ groupId: s.groupId, topics: [s.topic] })])
        const done = new Map((committed[0]?.partitions ?? []).map(x => [x.partition, BigInt(x.offset === '-1' ? '0' : x.offset)]))
        let lag = 0n
        for (const h of high) lag += BigInt(h.high) - (done.get(h.partition) ?? 0n)
        scope.healthy({ lag: Number(lag < 0n ? 0n : lag) })
      } catch {}
    }
    lagTimer = setInterval(() => { void measure() }, LAG_EVERY_MS)
    void measure()
    return await new Promise<Error>(resolve => {
      void crashed.then(resolve)
      scope.signal.addEventListener('abort', () => { resolve(new Error('stopped')) }, { once: true })
    })
  } finally {
    clearInterval(alive)
    if (lagTimer !== null) clearInterval(lagTimer)
    await admin.disconnect().catch(() => {})
    if (scope.signal.aborted) await consumer.disconnect().catch(() => {})
  }
}

/**
 * Runs the workflow for one message once across instances: claimed in the store first (a message
 * delivered again after a rebalance is skipped when its run is over, and waits while the instance
 * that has it runs it under a fresh lease), then run, retrying a failed run in after_success mode,
 * then marked done. A store that cannot be reached stops consumption (the consumer restarts with
 * backoff and the message comes again) rather than risk a second run.
 */
async function handle (scope: TriggerScope, s: BrokerSettings, p: EachMessagePayload, store: Store): Promise<void> {
  const key: BrokerPartitionKey = { proxyId: scope.proxy.id, group: s.groupId, topic: p.topic, partition: p.partition }
  const offset = p.message.offset
  for (;;) {
    const claim = await claimBrokerOffset(store, key, offset, scope.instanceId, LEASE_MS)
    if (claim === 'done') return
    if (claim === 'run') break
    if (scope.signal.aborted) throw new Error('stopped')
    await p.heartbeat().catch(() => {})
    await sleep(250, scope.signal)
  }
  const renew = setInterval(() => { renewBrokerLease(store, key, offset, scope.instanceId, LEASE_MS).catch(() => {}) }, LEASE_MS / 3)
  try {
    await runWithRetries(scope, s, p)
  } finally { clearInterval(renew) }
  // The run is over: keep trying to record it for a while (a store that blinks here would
  // otherwise let the redelivered message run again).
  for (let attempt = 1; ; attempt++) {
    try {
      await finishBrokerOffset(store, key, offset)
      return
    } catch (err) {
      if (attempt >= FINISH_ATTEMPTS) throw err
      await new Promise(resolve => setTimeout(resolve, 250 * attempt))
    }
  }
}

/** Runs the workflow for one message, retrying a failed run in after_success mode. */
async function runWithRetries (scope: TriggerScope, s: BrokerSettings, p: EachMessagePayload): Promise<void> {
  const output = messageOutput(p)
  for (let attempt = 1; ; attempt++) {
    const r = await scope.run({ ...output }, traceOf(output.headers as Record<string, string>))
    if (r.status === 'success' || s.commitMode === 'per_message') {
      if (r.status === 'success') scope.healthy()
      return
    }
    if (attempt >= ATTEMPTS || scope.signal.aborted) {
      scope.failing(new Error(`The run for ${p.topic}[${p.partition}] offset ${p.message.offset} failed ${attempt} times (last: ${r.status}, execution ${r.execution_id}); the message was committed so the partition moves on.`))
      return
    }
    await p.heartbeat().catch(() => {})
    await sleep(200 * attempt, scope.signal)
  }
}

/** Test-listen: a throwaway group from the latest offset; the first message that arrives. */
export async function firstMessage (settings: Record<string, unknown>, signal: AbortSignal, credential: CredentialLoader, connected: () => void = () => {}): Promise<Record<string, unknown>> {
  const topic = typeof settings.topic === 'string' ? settings.topic : ''
  if (topic === '') throw new Error('The broker trigger has no topic.')
  const config = await credential(settings.credentials_id, 'kafka')
  const consumer = kafkaClient(config, '-listen').consumer({ groupId: `gatehouse-listen-${randomUUID()}`, sessionTimeout: 10_000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 })
  const where = `Kafka broker${config.brokers.length === 1 ? '' : 's'} ${config.brokers.join(', ')}`
  try {
    await consumer.connect().catch((err: unknown) => { throw badGateway(`The ${where} could not be reached: ${causeOf(err)}.`) })
    await consumer.subscribe({ topic, fromBeginning: false }).catch((err: unknown) => { throw badGateway(`Topic '${topic}' could not be subscribed to on the ${where}: ${causeOf(err)}.`) })
    connected()
    return await new Promise<Record<string, unknown>>((resolve, reject) => {
      signal.addEventListener('abort', () => { reject(new Error('The listen ended before a message arrived.')) }, { once: true })
      consumer.on(consumer.events.CRASH, e => { reject(badGateway(`The ${where} failed while listening: ${causeOf(e.payload.error)}.`)) })
      consumer.run({ autoCommit: false, eachMessage: async p => { resolve({ ...messageOutput(p), run_id: randomUUID() }) } }).catch(reject)
    })
  } finally {
    await consumer.disconnect().catch(() => {})
  }
}

/** The root cause of a kafkajs error (retries wrap the connection error they gave up on), as one phrase. */
function causeOf (err: unknown): string {
  let e = err as { message?: string, originalError?: unknown, cause?: unknown } | undefined
  for (let i = 0; i < 5 && e !== undefined && (e.originalError ?? e.cause) !== undefined; i++) e = (e.originalError ?? e.cause) as typeof e
  return String(e?.message ?? err).replace(/\.$/, '')
}
