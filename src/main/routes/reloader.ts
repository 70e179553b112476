/**
 * Keeps this instance's picture of the served configuration (active collections and their
 * published proxies) in step with the store, O(what changed):
 *
 *   change here, broadcast from another instance, store poll, Redis link restored
 *     └─ reload: the change rows after the version applied last (store/routing.ts)
 *          └─ a delta (changed records, removed ids) ──▶ apply(): mailboxes, gateway, portal, MCP, metrics, triggers
 *
 * At start, after a long gap or when too much changed, the whole snapshot is read and diffed
 * against the current picture instead. Reloads are serialised and bursts coalesce (at most one
 * running and one pending).
 */
import type { Collection, Proxy } from '../../common/types.js'
import type { Logger } from '../logger.js'
import { configVersion, loadRoutingChanges } from '../store/routing.js'
import type { Store } from '../store/types.js'

/** What changed since the last update: records to add or replace, and ids that are gone. */
export interface RoutingDelta {
  collections?: readonly Collection[]
  removedCollections?: readonly string[]
  proxies?: readonly Proxy[]
  removedProxies?: readonly string[]
}

/** The served configuration as this instance knows it; the lists are built on demand and kept until the next change. */
export interface RoutingView {
  collection (id: string): Collection | undefined
  proxy (id: string): Proxy | undefined
  collections (): readonly Collection[]
  proxies (): readonly Proxy[]
}

export interface RoutingUpdate {
  /** True at start and after a full reload (the delta then also lists everything that went). */
  full: boolean
  delta: RoutingDelta & { collections: readonly Collection[], proxies: readonly Proxy[], removedCollections: readonly string[], removedProxies: readonly string[] }
  view: RoutingView
}

export interface RouteReloaderOptions {
  store: Store
  logger: Logger
  /** Applies an update synchronously to everything that serves from the configuration. */
  apply: (u: RoutingUpdate) => void
  /** Reloads profiles, clients and policies (at start and when one changed). */
  reloadAccess: () => Promise<void>
}

export interface RouteReloader {
  reload (): Promise<void>
  /** Reloads when the store's version moved (the fallback when no broadcast arrives). */
  pollOnce (): Promise<void>
  /** Applies a served proxy again without a store change (its trigger-listen overlay changed). */
  refresh (proxyId: string): void
  readonly view: RoutingView
  /** The store's configuration version applied last (-1 before the first load); any change moves it. */
  readonly version: number
}

export function createRouteReloader (o: RouteReloaderOptions): RouteReloader {
  const collections = new Map<string, Collection>()
  const proxies = new Map<string, Proxy>()
  const byCollection = new Map<string, Set<string>>()
  let lists: { collections: Collection[], proxies: Proxy[] } | null = null
  const view: RoutingView = {
    collection: id => collections.get(id),
    proxy: id => proxies.get(id),
    collections: () => (lists ??= { collections: [...collections.values()], proxies: [...proxies.values()] }).collections,
    proxies: () => (lists ??= { collections: [...collections.values()], proxies: [...proxies.values()] }).proxies
  }
  const addProxy = (p: Proxy) => {
    proxies.set(p.id, p)
    let ids = byCollection.get(p.collection_id)
    if (ids === undefined) byCollection.set(p.collection_id, ids = new Set())
    ids.add(p.id)
  }
  const dropProxy = (id: string): boolean => {
    const p = proxies.get(id)
    if (p === undefined) return false
    proxies.delete(id)
    const ids = byCollection.get(p.collection_id)
    ids?.delete(id)
    if (ids?.size === 0) byCollection.delete(p.collection_id)
    return true
  }

  let current = -1
  let accessLoaded = false
  let running: Promise<void> | null = null
  let again = false
  const once = async (): Promise<void> => {
    const loaded = await loadRoutingChanges(o.store, current)
    if (loaded.full || loaded.access || !accessLoaded) { await o.reloadAccess(); accessLoaded = true }
    const removedCollections = new Set<string>()
    const removedProxies = new Set<string>()
    if (loaded.full) {
      const cIds = new Set(loaded.collections.map(c => c.id))
      const pIds = new Set(loaded.proxies.map(p => p.id))
      for (const id of collections.keys()) if (!cIds.has(id)) removedCollections.add(id)
      for (const id of proxies.keys()) if (!pIds.has(id)) removedProxies.add(id)
    } else {
      for (const id of loaded.collectionIds) {
        if (collections.has(id)) removedCollections.add(id)
        for (const pid of byCollection.get(id) ?? []) removedProxies.add(pid)
      }
      for (const id of loaded.proxyIds) if (proxies.has(id)) removedProxies.add(id)
    }
    for (const id of removedCollections) collections.delete(id)
    for (const id of removedProxies) dropProxy(id)
    for (const c of loaded.collections) { collections.set(c.id, c); removedCollections.delete(c.id) }
    for (const p of loaded.proxies) { addProxy(p); removedProxies.delete(p.id) }
    current = loaded.version
    const changed = loaded.full || loaded.collections.length + loaded.proxies.length + removedCollections.size + removedProxies.size > 0
    if (!changed) return
    lists = null
    o.apply({
      full: loaded.full,
      delta: { collections: loaded.collections, proxies: loaded.proxies, removedCollections: [...removedCollections], removedProxies: [...removedProxies] },
      view
    })
  }
  const reload = async (): Promise<void> => {
    if (running !== null) { again = true; return await running }
    running = (async () => {
      try {
        do { again = false; await once() } while (again)
      } catch (err) {
        o.logger.warn({ err }, 'route table reload failed; serving the previous table')
        throw err
      } finally { running = null }
    })()
    return await running
  }
  return {
    reload,
    async pollOnce () {
      const v = await configVersion(o.store)
      if (v !== current) await reload()
    },
    refresh (proxyId) {
      const p = proxies.get(proxyId)
      if (p === undefined) return
      o.apply({ full: false, delta: { collections: [], proxies: [p], removedCollections: [], removedProxies: [] }, view })
    },
    view,
    get version () { return current }
  }
}
