/**
 * How a configuration change reaches what serves from it. The route reloader (routes/reloader.ts)
 * computes what changed; every update is applied, in list order, to the consumers `start` hands
 * over once (workflow pool warm-up, workflow mailboxes, gateway, portal, gateway MCP, metrics, triggers):
 *
 *   write here ─────────── changed() ──┐
 *   broadcast from another instance ───┤
 *   Redis link restored ───────────────┼──▶ reload ──▶ consumers[0].apply … consumers[n].apply
 *   store poll (version moved) ────────┘
 *
 * Profiles, clients and policies are reloaded with it into one access snapshot.
 */
import { randomUUID } from 'node:crypto'
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import type { Store } from '../store/index.js'
import type { EventHub } from '../events/hub.js'
import { EMPTY_ACCESS, loadAccessSnapshot, type AccessSnapshot } from '../access/snapshot.js'
import { createRouteReloader, type RouteReloader, type RoutingUpdate } from '../routes/reloader.js'
import type { Subsystem } from './subsystem.js'

/** Broadcast channel on which an instance tells the others that the configuration changed. */
const CONFIG_CHANNEL = 'config-changed'

/** Something that serves from the configuration: configured once, applied (synchronously) at every reload. */
export interface ConfigConsumer {
  readonly name: string
  apply (update: RoutingUpdate): void
}

export interface ConfigReload {
  readonly routes: RouteReloader
  /** Profiles, clients and policies as of the last reload. */
  access (): AccessSnapshot
  /** Sets the consumers (once) and loads the whole configuration into them. */
  serve (consumers: readonly ConfigConsumer[]): Promise<void>
  /** A write on this instance: reload now, and tell the other instances. */
  changed (): void
  /** The reload started last (resolves, never rejects): a write's answer waits for it, and for every settle hook. */
  settled (): Promise<void>
  /** Awaited by settled() after the reload (gateway threads: every thread's acknowledgement of the version). */
  addSettleHook (hook: () => Promise<void>): void
  /** Told of every new access snapshot (gateway threads get it posted). */
  onAccess (fn: (access: AccessSnapshot) => void): void
  /** Follows changes made elsewhere (broadcasts, Redis reconnects, the store poll) until closed. */
  follow (config: Readonly<Config>): Subsystem
}

export function createConfigReload (o: { store: Store, logger: Logger, secretsKey: Buffer, hub: EventHub }): ConfigReload {
  const instanceId = randomUUID()
  let access: AccessSnapshot = EMPTY_ACCESS
  let consumers: readonly ConfigConsumer[] = []
  let pending: Promise<void> = Promise.resolve()
  const settleHooks: Array<() => Promise<void>> = []
  const accessListeners: Array<(a: AccessSnapshot) => void> = []
  const routes = createRouteReloader({
    store: o.store,
    logger: o.logger,
    reloadAccess: async () => {
      access = await loadAccessSnapshot(o.store, o.secretsKey)
      for (const fn of accessListeners) fn(access)
    },
    // O(what changed) on every consumer; a full update (start, long gap) diffs the whole picture.
    apply: update => { for (const c of consumers) c.apply(update) }
  })
  const reloadSoon = () => { pending = routes.reload().catch(() => {}) }
  return {
    routes,
    access: () => access,
    async serve (list) {
      consumers = list
      await routes.reload()
    },
    changed () {
      reloadSoon()
      // Other instances reload at once through Redis; the store poll stays the fallback.
      o.hub.broadcast(CONFIG_CHANNEL, { from: instanceId })
    },
    settled: async () => {
      await pending
      for (const hook of settleHooks) await hook().catch(() => {})
    },
    addSettleHook (hook) { settleHooks.push(hook) },
    onAccess (fn) { accessListeners.push(fn) },
    follow (config) {
      // A change made on another instance (through Redis), or a Redis link restored (broadcasts sent meanwhile are lost).
      const stopBroadcasts = o.hub.onBroadcast(CONFIG_CHANNEL, m => { if ((m as { from?: string }).from !== instanceId) reloadSoon() })
      const stopReconnect = o.hub.onReconnect(reloadSoon)
      // Instances without a shared cache still converge: each polls the store's change counter.
      const poll = setInterval(() => { routes.pollOnce().catch(() => {}) }, config.CONFIG_POLL_INTERVAL_MS)
      poll.unref()
      return {
        async close () {
          clearInterval(poll)
          stopBroadcasts()
          stopReconnect()
        }
      }
    }
  }
}
