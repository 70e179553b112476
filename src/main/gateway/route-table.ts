/**
 * The gateway's route table. Per-route state is compiled when a route changes
 * (fastify style: nothing resolved per request), and a configuration change
 * touches only what changed: O(changed routes), not O(all routes).
 *
 *   collections in a trie of base_path segments (longest prefix on a segment boundary first)
 *     └─ segment trie:  static child  >  {param} child  >  trailing /* leaf
 *          └─ leaf: method -> CompiledRoute
 */
import type { Collection, HeaderSpec, HttpMethod, Proxy, WorkflowDefinition } from '../../common/types.js'
import { compileRequestValidator, type CompiledValidator } from '../access/request-validation.js'
import { NON_GATEWAY_TRIGGER_TYPES } from '../../common/workflow-catalogue.js'
import { compileCors, type CompiledCors } from './responses/cors.js'
import type { UpstreamSet } from './upstreams/upstream-set.js'
import type { CompiledCompression } from './responses/compression.js'
import type { CompiledCache } from './responses/response-cache.js'
import type { RoutingDelta } from '../routes/reloader.js'

export interface CompiledRoute {
  proxy: Proxy
  collection: Collection
  /** `<base_path> <path>`, as the access log names the route. */
  name: string
  /** Names of the path's params in order of their segments. */
  paramNames: string[]
  /** Upstream origin pieces, parsed once (the first target's when the upstream has several). */
  upstream: { protocol: 'http:' | 'https:', hostname: string, port: number, hostHeader: string, basePath: string }
  /** The collection's balanced upstream, or null to forward straight to `upstream` (one IP target). */
  balanced: UpstreamSet | null
  /** Target path split on params and the wildcard, for cheap substitution. */
  targetParts: Array<string | { param: string } | { wildcard: true }>
  /** Collection then proxy headers (proxy wins), env references resolved; lower-case names. */
  addHeaders: Array<[string, string]>
  addHeaderNames: Set<string>
  timeoutMs: number | null
  /** Request body limit (the proxy's, else MAX_BODY_BYTES). */
  maxBodyBytes: number
  streaming: boolean
  /** Relays WebSocket upgrades (websocket/relay.ts). */
  websocket: boolean
  /** Parameter and body validation; null when the proxy declares neither (one check per request). */
  validator: CompiledValidator | null
  /** The enabled workflow that answers instead of the backend, or null. */
  workflow: WorkflowDefinition | null
  /** The collection's CORS, or null (no CORS headers, preflights are ordinary OPTIONS requests). */
  cors: CompiledCors | null
  /** Answer compression (null: COMPRESSION=off, the proxy's `compression` is false, or it streams). */
  compression: CompiledCompression | null
  /** The response cache (null: the proxy has no `cache`, or it streams). */
  cache: CompiledCache | null
}

/** Gateway-wide settings the routes are compiled with. */
export interface RouteDefaults { compression: boolean, compressionMinBytes: number }
const DEFAULTS: RouteDefaults = { compression: true, compressionMinBytes: 1024 }

interface TrieNode {
  statics: Map<string, TrieNode>
  param: TrieNode | null
  wildcard: Map<string, CompiledRoute> | null
  leaf: Map<string, CompiledRoute> | null
}

interface CollectionEntry { collection: Collection, key: string, segments: string[], root: TrieNode, balanced: UpstreamSet | null }

/** Compiles collections' upstreams (upstreams/registry.ts); absent, every route forwards straight to its first target. */
export interface UpstreamCompiler { get (c: Collection): UpstreamSet | null, drop (id: string): void }

export interface Match { route: CompiledRoute, params: string[], tail: string }
export type MatchResult = Match | { allow: string[] } | null

const node = (): TrieNode => ({ statics: new Map(), param: null, wildcard: null, leaf: null })

/** A proxy's place in its collection's trie, with the key its route was compiled for. */
interface Placed { proxy: Proxy, key: string, route: CompiledRoute | null, segs: string[], wildcard: boolean, placedIn: CollectionEntry | null }

/**
 * What a compiled route depends on: a record's version and updated_at change with every write;
 * status and the workflow are also set by the trigger-listen overlay without a write.
 */
function routeKey (c: Collection, p: Proxy): string {
  return `${c.version}|${c.updated_at}|${p.version}|${p.updated_at}|${p.status}|${p.workflow_enabled ? JSON.stringify(p.workflow) : '-'}`
}
const collectionKey = (c: Collection) => `${c.version}|${c.updated_at}|${c.status}|${c.base_path}`

/**
 * The route table, updated in place by what changed: a proxy change recompiles and re-places that
 * proxy only; a collection change re-places that collection's proxies. Updates run synchronously
 * on the gateway's thread, so a request is matched against the table before or after an update,
 * never half-way.
 */
export class RouteTable {
  size = 0
  private readonly collections = new Map<string, CollectionEntry>()
  /** Every proxy given, served or not (a proxy comes back when its collection does). */
  private readonly proxies = new Map<string, Placed>()
  private readonly byCollection = new Map<string, Set<string>>()
  private readonly bases: BaseNode = baseNode()

  constructor (
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly warn: (msg: string, data: object) => void,
    private readonly defaultMaxBody = 1024 * 1024,
    private readonly upstreams: UpstreamCompiler | null = null,
    private readonly defaults: RouteDefaults = DEFAULTS
  ) {}

  match (method: string, pathSegments: string[]): MatchResult { return matchBase(this.bases, pathSegments, 0, method) }

  /** Replaces the whole configuration: compares it with the current one and applies the difference. */
  set (collections: readonly Collection[], proxies: readonly Proxy[]): void {
    const cIds = new Set(collections.map(c => c.id))
    const pIds = new Set(proxies.map(p => p.id))
    this.apply({
      collections,
      proxies,
      removedCollections: [...this.collections.keys()].filter(id => !cIds.has(id)),
      removedProxies: [...this.proxies.keys()].filter(id => !pIds.has(id))
    })
  }

  apply (d: RoutingDelta): void {
    for (const id of d.removedProxies ?? []) this.removeProxy(id)
    for (const id of d.removedCollections ?? []) this.removeCollection(id)
    for (const c of d.collections ?? []) this.upsertCollection(c)
    for (const p of d.proxies ?? []) this.upsertProxy(p)
  }

  private upsertCollection (c: Collection): void {
    const cur = this.collections.get(c.id)
    if (c.status !== 'active') { this.removeCollection(c.id); return }
    const key = collectionKey(c)
    if (cur !== undefined && cur.key === key) return
    if (cur !== undefined) this.removeCollection(c.id, true)
    // Compiled once per collection change; its routes share it (health, budget, pools).
    const balanced = this.upstreams?.get(c) ?? null
    const entry: CollectionEntry = { collection: c, key, segments: c.base_path.split('/').filter(Boolean), root: node(), balanced }
    this.collections.set(c.id, entry)
    // Collections in a trie of their base-path segments: a request walks it once, so matching costs
    // the path's depth whatever the number of collections.
    let n = this.bases
    for (const seg of entry.segments) {
      let next = n.children.get(seg)
      if (next === undefined) n.children.set(seg, next = baseNode())
      n = next
    }
    n.entry = entry
    for (const id of this.byCollection.get(c.id) ?? []) this.place(this.proxies.get(id)!)
  }

  /** `replaced`: the collection comes back at once, and its upstream with it. */
  private removeCollection (id: string, replaced = false): void {
    const entry = this.collections.get(id)
    if (entry === undefined) return
    this.collections.delete(id)
    if (!replaced) this.upstreams?.drop(id)
    for (const pid of this.byCollection.get(id) ?? []) this.unplace(this.proxies.get(pid)!)
    const path: BaseNode[] = [this.bases]
    let last = this.bases
    for (const seg of entry.segments) {
      const next = last.children.get(seg)
      if (next === undefined) return
      path.push(last = next)
    }
    if (last.entry === entry) last.entry = null
    // path[i] is reached by entry.segments[i - 1]: both indexes are in range for i in 1..path.length - 1.
    for (let i = path.length - 1; i > 0; i--) {
      const n = path[i]!
      if (n.entry !== null || n.children.size > 0) break
      path[i - 1]!.children.delete(entry.segments[i - 1]!)
    }
  }

  private upsertProxy (p: Proxy): void {
    const cur = this.proxies.get(p.id)
    if (cur !== undefined) {
      this.unplace(cur)
      if (cur.proxy.collection_id !== p.collection_id) this.byCollection.get(cur.proxy.collection_id)?.delete(p.id)
    }
    const segs = p.path.split('/').filter(Boolean)
    const star = segs.indexOf('*')
    const placed: Placed = {
      proxy: p,
      // An unchanged proxy keeps its compiled route (validators, URLs, header lists).
      key: cur?.key ?? '',
      route: cur?.route ?? null,
      segs: star >= 0 ? segs.slice(0, star) : segs,
      wildcard: star >= 0,
      placedIn: null
    }
    this.proxies.set(p.id, placed)
    let ids = this.byCollection.get(p.collection_id)
    if (ids === undefined) this.byCollection.set(p.collection_id, ids = new Set())
    ids.add(p.id)
    this.place(placed)
  }

  private removeProxy (id: string): void {
    const cur = this.proxies.get(id)
    if (cur === undefined) return
    this.unplace(cur)
    this.proxies.delete(id)
    const ids = this.byCollection.get(cur.proxy.collection_id)
    ids?.delete(id)
    if (ids?.size === 0) this.byCollection.delete(cur.proxy.collection_id)
  }

  private place (x: Placed): void {
    const p = x.proxy
    const entry = this.collections.get(p.collection_id)
    if (entry === undefined || p.status !== 'published') return
    const key = routeKey(entry.collection, p)
    if (x.key !== key) {
      x.key = key
      x.route = compileRoute(entry.collection, p, this.env, this.warn, this.defaultMaxBody, entry.balanced, this.defaults)
    }
    const route = x.route
    if (route === null) return
    let n = entry.root
    for (const s of x.segs) {
      if (s.startsWith('{') && s.endsWith('}')) n = n.param ??= node()
      else {
        let next = n.statics.get(s)
        if (next === undefined) n.statics.set(s, next = node())
        n = next
      }
    }
    const slot = x.wildcard ? (n.wildcard ??= new Map()) : (n.leaf ??= new Map())
    for (const m of p.methods) slot.set(m, route)
    x.placedIn = entry
    this.size++
  }

  private unplace (x: Placed): void {
    const entry = x.placedIn
    if (entry === null || x.route === null) return
    x.placedIn = null
    this.size--
    const path: TrieNode[] = [entry.root]
    let last = entry.root
    for (const s of x.segs) {
      const next = s.startsWith('{') && s.endsWith('}') ? last.param : last.statics.get(s)
      if (next === null || next === undefined) return
      path.push(last = next)
    }
    const slot = x.wildcard ? last.wildcard : last.leaf
    if (slot !== null) {
      // Only this proxy's methods: another proxy may hold the same path for other methods.
      for (const m of x.proxy.methods) if (slot.get(m) === x.route) slot.delete(m)
      if (slot.size === 0) { if (x.wildcard) last.wildcard = null; else last.leaf = null }
    }
    // path[i] is reached by x.segs[i - 1]: both indexes are in range for i in 1..path.length - 1.
    for (let i = path.length - 1; i > 0; i--) {
      const n = path[i]!
      if (n.leaf !== null || n.wildcard !== null || n.param !== null || n.statics.size > 0) break
      const parent = path[i - 1]!
      const s = x.segs[i - 1]!
      if (s.startsWith('{') && s.endsWith('}')) parent.param = null
      else parent.statics.delete(s)
    }
  }
}

/** A table holding exactly these collections and proxies. */
export function compileRouteTable (collections: readonly Collection[], proxies: readonly Proxy[], env: Readonly<Record<string, string | undefined>>, warn: (msg: string, data: object) => void, defaultMaxBody = 1024 * 1024): RouteTable {
  const table = new RouteTable(env, warn, defaultMaxBody)
  table.set(collections, proxies)
  return table
}

interface BaseNode { children: Map<string, BaseNode>, entry: CollectionEntry | null }
const baseNode = (): BaseNode => ({ children: new Map(), entry: null })

/**
 * The longest base path first: deeper trie nodes are tried before the collection at this depth;
 * a collection with no matching proxy falls through to a shorter base path. The first 405 seen
 * (the most specific collection's) is kept unless a route matches.
 */
function matchBase (n: BaseNode, segs: string[], depth: number, method: string): MatchResult {
  let allow: { allow: string[] } | null = null
  const seg = segs[depth]
  if (seg !== undefined) {
    const child = n.children.get(seg)
    if (child !== undefined) {
      const m = matchBase(child, segs, depth + 1, method)
      if (m !== null && !('allow' in m)) return m
      allow = m
    }
  }
  if (n.entry !== null) {
    const m = walk(n.entry.root, segs, depth, [], method)
    if (m !== null && !('allow' in m)) return m
    allow ??= m
  }
  return allow
}

/** Depth-first with precedence static > param > wildcard; backtracks when a branch has no route. */
function walk (n: TrieNode, segs: string[], i: number, params: string[], method: string): Match | { allow: string[] } | null {
  let allow: { allow: string[] } | null = null
  const seg = segs[i]
  if (seg === undefined) { // i === segs.length
    if (n.leaf !== null) {
      const r = n.leaf.get(method) ?? (method === 'HEAD' ? n.leaf.get('GET') : undefined)
      if (r !== undefined) return { route: r, params: params.slice(), tail: '' }
      allow = { allow: [...n.leaf.keys()] }
    }
  } else {
    const s = n.statics.get(seg)
    if (s !== undefined) {
      const m = walk(s, segs, i + 1, params, method)
      if (m !== null && !('allow' in m)) return m
      allow ??= m
    }
    if (n.param !== null && seg !== '') {
      params.push(seg)
      const m = walk(n.param, segs, i + 1, params, method)
      params.pop()
      if (m !== null && !('allow' in m)) return m
      allow ??= m
    }
  }
  if (n.wildcard !== null) {
    const r = n.wildcard.get(method) ?? (method === 'HEAD' ? n.wildcard.get('GET') : undefined)
    if (r !== undefined) return { route: r, params: params.slice(), tail: segs.slice(i).join('/') }
    allow ??= { allow: [...n.wildcard.keys()] }
  }
  return allow
}

function compileRoute (c: Collection, p: Proxy, env: Readonly<Record<string, string | undefined>>, warn: (msg: string, data: object) => void, defaultMaxBody: number, balanced: UpstreamSet | null, defaults: RouteDefaults): CompiledRoute | null {
  let url: URL
  // Records built before upstreams (tests, old callers) carry only upstream_url.
  try { url = new URL(c.upstream?.targets[0]?.url ?? c.upstream_url ?? '') } catch { warn('collection upstream_url is not a URL; its proxies are not served', { collection_id: c.id }); return null }
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:'
  const port = url.port !== '' ? Number(url.port) : protocol === 'https:' ? 443 : 80
  const headers = new Map<string, string>()
  const add = (list: HeaderSpec[], owner: string) => {
    for (const h of list) {
      const name = h.name.toLowerCase()
      if ('env' in h) {
        const v = env[h.env]
        if (v === undefined) { warn('header references an unset environment variable; the header is omitted', { owner, header: h.name, env: h.env }); continue }
        headers.set(name, v)
      } else headers.set(name, h.value)
    }
  }
  add(c.headers, `collection ${c.id}`)
  add(p.headers, `proxy ${p.id}`)
  let validator: CompiledValidator | null
  try { validator = compileRequestValidator(p) } catch (err) {
    // Fail closed: a proxy whose schema cannot be compiled is not served.
    warn('proxy request_schema does not compile; the proxy is not served', { proxy_id: p.id, err: (err as Error).message })
    return null
  }
  return {
    proxy: p,
    collection: c,
    name: `${c.base_path} ${p.path}`,
    paramNames: [...p.path.matchAll(/\{([^/}]+)\}/g)].map(m => m[1]!), // group 1 always takes part
    upstream: { protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port, hostHeader: url.host, basePath: url.pathname.replace(/\/$/, '') },
    balanced,
    targetParts: splitTarget(p.target_path),
    addHeaders: [...headers.entries()],
    addHeaderNames: new Set(headers.keys()),
    timeoutMs: p.timeout_ms,
    maxBodyBytes: p.max_body_bytes ?? defaultMaxBody,
    streaming: p.streaming,
    websocket: p.websocket ?? false,
    validator,
    // Gateway traffic starts only http_trigger workflows: a proxy whose workflow starts on its own (cron, broker,
    // IMAP) or from the builder (manual) forwards to its backend like a proxy without a workflow.
    workflow: p.workflow_enabled && p.workflow !== null && startsFromGateway(p.workflow) ? p.workflow : null,
    cors: c.cors == null ? null : compileCors(c.cors),
    // A streaming proxy's answers pass as they come: never gathered to compress.
    compression: defaults.compression && p.compression !== false && !p.streaming ? { minBytes: defaults.compressionMinBytes } : null,
    // The tag moves with any change of the proxy or its collection: entries of an older configuration are never served.
    cache: p.cache != null && !p.streaming
      ? { ttlS: p.cache.ttl_s, vary: p.cache.vary.map(h => h.toLowerCase()).sort(), shared: p.cache.shared, tag: `${c.id}.${c.version}.${c.updated_at}.${p.version}.${p.updated_at}` }
      : null
  }
}

function splitTarget (target: string): CompiledRoute['targetParts'] {
  const parts: CompiledRoute['targetParts'] = []
  const re = /\{([^/}]+)\}|\/\*$/g
  let last = 0
  for (const m of target.matchAll(re)) {
    if (m.index > last) parts.push(target.slice(last, m.index))
    if (m[1] !== undefined) parts.push({ param: m[1] })
    else { parts.push('/'); parts.push({ wildcard: true }) }
    last = m.index + m[0].length
  }
  if (last < target.length) parts.push(target.slice(last))
  return parts
}

export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']

/** True unless the workflow's entry trigger is one that gateway traffic never starts. */
function startsFromGateway (def: WorkflowDefinition): boolean {
  return !def.nodes.some(n => NON_GATEWAY_ENTRY_TYPES.has(n.type))
}
const NON_GATEWAY_ENTRY_TYPES = new Set(NON_GATEWAY_TRIGGER_TYPES)
