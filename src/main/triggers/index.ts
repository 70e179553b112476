/**
 * Production triggers on this instance: the supervisor, its sync with the other
 * instances, shared health, and the start function of each kind.
 */
import { randomBytes } from 'node:crypto'
import type { KeyValueCache, LockManager } from '../cache/types.js'
import type { EventHub } from '../events/hub.js'
import type { EventInput } from '../events/types.js'
import type { Logger } from '../logger.js'
import { loadRoutingSnapshot } from '../store/routing.js'
import type { Store } from '../store/types.js'
import type { Runner } from '../workflows/runner.js'
import { brokerTrigger } from './broker.js'
import { cronTrigger } from './cron.js'
import { credentialLoader } from './credentials.js'
import { imapTrigger } from './imap.js'
import { TriggerHealth } from './health.js'
import { createTriggerSupervisor, type TriggerSupervisor } from './supervisor.js'
import { createTriggerSync } from './sync.js'
import { triggerCapture, type CaptureTrigger } from './test-capture.js'
import type { StartTrigger, TriggerKind } from './types.js'

export interface Triggers {
  readonly instanceId: string
  readonly health: TriggerHealth
  readonly supervisor: TriggerSupervisor
  /** Test-listen for cron, IMAP and broker triggers. */
  readonly capture: CaptureTrigger
  /** Management events published on this instance (they may start, stop or reconfigure triggers). */
  notify (event: EventInput): void
  /** Reads every served proxy from the store and reconciles. */
  bootstrap (): Promise<void>
  prometheus (): string
  close (): Promise<void>
}

export interface TriggerDeps {
  store: Store
  runner: Pick<Runner, 'run'>
  hub: EventHub
  kv: KeyValueCache
  locks: LockManager
  logger: Logger
  heartbeatMs: number
  /** Opens the credentials that IMAP and broker triggers connect with. */
  secretsKey: Buffer
  /** More kinds, or replacements. */
  starters?: Partial<Record<TriggerKind, StartTrigger>>
}

export function createTriggers (deps: TriggerDeps): Triggers {
  const instanceId = randomBytes(6).toString('hex')
  const logger = deps.logger.child({ component: 'triggers' })
  const credential = credentialLoader(deps.store, deps.secretsKey)
  const health = new TriggerHealth({ kv: deps.kv, events: deps.hub, logger })
  const supervisor = createTriggerSupervisor({
    store: deps.store, runner: deps.runner, health, logger, instanceId,
    starters: {
      cron_trigger: cronTrigger(deps.locks),
      imap_trigger: imapTrigger({ store: deps.store, locks: deps.locks, credential }),
      broker_consumer: brokerTrigger({ credential, store: deps.store }),
      ...deps.starters
    },
    heartbeatMs: deps.heartbeatMs,
    stallMs: deps.heartbeatMs * 6
  })
  const bootstrap = async () => { await supervisor.reconcileAll((await loadRoutingSnapshot(deps.store)).proxies) }
  const sync = createTriggerSync({ hub: deps.hub, store: deps.store, supervisor, bootstrap, instanceId, logger })
  return {
    instanceId,
    health,
    supervisor,
    capture: triggerCapture({ credential }),
    notify: e => { sync.notify(e) },
    bootstrap,
    prometheus: () => health.prometheus(supervisor.local()),
    async close () {
      sync.close()
      await supervisor.close()
    }
  }
}
