/**
 * Trigger synchronisation between instances (spec: Events). After a change
 * that can start, stop or reconfigure a trigger, the instance that made it
 * broadcasts `{event_type, proxy_id, version, source}`; every instance, the
 * sender included, applies it by re-reading the proxy from the store, and skips
 * a message whose version it has already applied. With Redis the broadcast goes
 * over the event hub's shared channel; without Redis it stays in-process.
 *
 *   management change ──▶ notify(event) ──▶ hub.broadcast('trigger_sync', msg)
 *   every instance ◀── onBroadcast ──▶ supervisor.syncProxy (a proxy changed)
 *                                      supervisor.syncCollection (a collection changed: its proxies only)
 *                                      bootstrap (proxy_id null and no collection: a full read)
 *   Redis subscription restored ──▶ bootstrap (full read of the store)
 *
 * A collection change reads that collection's proxies, never the whole store: an import of many
 * collections into a large configuration costs what it imports.
 */
import type { EventHub } from '../events/hub.js'
import type { EventInput } from '../events/types.js'
import type { Logger } from '../logger.js'
import { getProxy } from '../store/proxies.js'
import type { Store } from '../store/types.js'
import type { TriggerSupervisor } from './supervisor.js'

export const TRIGGER_SYNC_CHANNEL = 'trigger_sync'

export interface TriggerSyncMessage {
  event_type: string
  /** null: the triggers of `collection_ids`, or every trigger when that is absent (older senders). */
  proxy_id: string | null
  /** The collections a collection change touched (a duplicate names the copy too). */
  collection_ids?: string[]
  /** The proxy's version after the change; null when it no longer exists or for a bootstrap. */
  version: number | null
  source: string
  credential_id?: string
}

export interface TriggerSync {
  /** Hook for management events published on this instance. */
  notify (event: EventInput): void
  close (): void
}

export function createTriggerSync (deps: {
  hub: Pick<EventHub, 'broadcast' | 'onBroadcast' | 'onReconnect'>
  store: Store
  supervisor: TriggerSupervisor
  bootstrap: () => Promise<void>
  instanceId: string
  logger: Logger
}): TriggerSync {
  const applied = new Map<string, number>()
  const send = (msg: Omit<TriggerSyncMessage, 'source'>) => { deps.hub.broadcast(TRIGGER_SYNC_CHANNEL, { ...msg, source: deps.instanceId }) }
  const failed = (err: Error) => { deps.logger.warn({ err: err.message }, 'trigger sync failed; the next configuration poll converges') }

  const stopMessages = deps.hub.onBroadcast(TRIGGER_SYNC_CHANNEL, raw => {
    const m = raw as TriggerSyncMessage
    if (m.event_type === 'credential_changed' && typeof m.credential_id === 'string') { deps.supervisor.restartUsing(m.credential_id).catch(failed); return }
    if (m.proxy_id === null) {
      if (Array.isArray(m.collection_ids)) for (const id of m.collection_ids) deps.supervisor.syncCollection(id).catch(failed)
      else deps.bootstrap().catch(failed)
      return
    }
    if (typeof m.version === 'number') {
      if ((applied.get(m.proxy_id) ?? -1) >= m.version) return
      applied.set(m.proxy_id, m.version)
    } else applied.delete(m.proxy_id)
    deps.supervisor.syncProxy(m.proxy_id).catch(failed)
  })
  const stopReconnect = deps.hub.onReconnect(async () => { await deps.bootstrap() })

  return {
    notify (e) {
      if (e.resource_kind === 'proxy' || e.resource_kind === 'proxy_workflow') {
        const type = e.resource_kind === 'proxy' ? `proxy_${e.operation}` : 'workflow_saved'
        getProxy(deps.store, e.proxy_id).then(p => p.version, () => null)
          .then(version => { send({ event_type: type, proxy_id: e.proxy_id, version }) }, failed)
      } else if (e.resource_kind === 'collection') {
        const ids = e.related_collection_id === undefined ? [e.collection_id] : [e.collection_id, e.related_collection_id]
        send({ event_type: `collection_${e.operation}`, proxy_id: null, version: null, collection_ids: ids })
      } else if (e.resource_kind === 'credential' && e.operation === 'updated') {
        send({ event_type: 'credential_changed', proxy_id: null, version: null, credential_id: e.credential_id })
      }
    },
    close () { stopMessages(); stopReconnect() }
  }
}
