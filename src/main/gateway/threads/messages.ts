/**
 * What the main thread and a gateway thread (GATEWAY_THREADS > 1) say to each other over the
 * worker's port. Everything is structured-cloneable: records (as columns), maps, buffers.
 */
import type { MessagePort } from 'node:worker_threads'
import type { Config } from '../../config/config.js'
import type { Collection, Proxy } from '../../../common/types.js'
import type { PolicySnapshot } from '../../access/policy-limits.js'
import type { ProfileSnapshot } from '../../access/profile-auth.js'
import type { RoutingDelta } from '../../routes/reloader.js'
import type { RecordBatch } from './records.js'
import type { WireCacheEntry } from '../responses/cache-store.js'
import type { HealthChange, HealthReport } from '../upstreams/health.js'

export interface ThreadData {
  /** 1, 2, …: the main thread's gateway is thread 0. */
  index: number
  config: Readonly<Config>
  env: Readonly<Record<string, string | undefined>>
  hopSecret: string
  /** The shared counters (CACHE_TYPE=memory); null with Redis, which every thread reaches itself. */
  limiterMemory: SharedArrayBuffer | null
  keyPrefix: string | undefined
  /** Paths of the web routes the main thread serves (the gateway MCP, the portal assistant). */
  webPaths: string[]
  /** The configuration version the routes and access below are. */
  version: number
  collections: Collection[]
  proxies: Proxy[]
  access: AccessMessage
  /** The main thread holds the memory response cache: this thread asks it over this port; null with Redis. */
  cachePort: MessagePort | null
  /** Upstream addresses the main thread holds out now (upstreams/health.ts). */
  health: HealthChange[]
}

export interface AccessMessage { profiles: ReadonlyMap<string, ProfileSnapshot>, policies: ReadonlyMap<string, PolicySnapshot> }

export type ToThread =
  | { t: 'routes', v: number, full: true, collections: readonly Collection[], proxies: readonly Proxy[] }
  | { t: 'routes', v: number, full: false, delta: RoutingDelta }
  | { t: 'access', v: number, access: AccessMessage }
  | { t: 'purge', proxyId: string }
  /** Changes of upstream health the main thread decided, for this thread's balancers. */
  | { t: 'health', changes: HealthChange[] }
  | { t: 'close' }
  | { t: 'crash' }
  | { t: 'reply', id: number, ok: true, value: unknown }
  | { t: 'reply', id: number, ok: false, error: WireError }
  | { t: 'web-head', id: number, status: number, headers: Array<[string, string]> }
  | { t: 'web-chunk', id: number, chunk: Uint8Array }
  | { t: 'web-end', id: number }
  | { t: 'web-error', id: number, message: string }

export type FromThread =
  | { t: 'ready', port: number }
  | { t: 'ack', v: number }
  /** Finished requests as columns (records.ts), admitted quota hits, the thread's shed counters, its response-cache counts (proxy, hit, miss, stored). */
  | { t: 'obs', records: RecordBatch, quotas: Array<[string, string, number, number]>, shed: { in_flight: number, event_loop_delay: number }, cache: Array<[string, number, number, number]> }
  | { t: 'log', text: string }
  /** Passive upstream outcomes of one turn, for the main thread to judge (failures, and a success after them). */
  | { t: 'health', reports: HealthReport[] }
  | { t: 'call', id: number, op: 'workflow' | 'readiness', args: unknown[] }
  | { t: 'web', id: number, path: string, method: string, url: string, headers: Array<[string, string]>, body: Uint8Array | null, peer: unknown }
  | { t: 'web-cancel', id: number }
  | { t: 'closed' }

/**
 * The main thread's memory response cache, on a port of its own: lookups (a turn's worth in one
 * message, answered with its id) and a store. Its own port lets the main thread take every thread's pending stores before it
 * answers a lookup or purges (receiveMessageOnPort), so an answer stored before a lookup was
 * asked is found, whichever threads served them.
 */
export type CacheRequest =
  /** The lookups of one turn of the thread's loop (the memory store finds entries by key alone). */
  | { t: 'get', id: number, keys: string[] }
  | { t: 'set', proxyId: string, key: string, entry: WireCacheEntry }
/** The entries of a 'get', in its keys' order (null: none). */
export interface CacheAnswer { id: number, entries: Array<WireCacheEntry | null> }

/** An AppError as it crosses threads. */
export interface WireError { status: number, code: string, message: string, details?: unknown, headers?: Record<string, string> }
