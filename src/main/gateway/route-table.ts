/**
 * The gateway's route table, compiled once per configuration change and
 * swapped in one assignment (fastify style: per-route state built up front,
 * nothing resolved per request).
 *
 *   collections in a trie of base_path segments (longest prefix on a segment boundary first)
 *     └─ segment trie:  static child  >  {param} child  >  trailing /* leaf
 *          └─ leaf: method -> CompiledRoute
 */
import type { Collection, HeaderSpec, HttpMethod, Proxy, WorkflowDefinition } from '../../common/types.js'
import { compileRequestValidator, type CompiledValidator } from '../access/request-validation.js'
import { NON_GATEWAY_TRIGGER_TYPES } from '../triggers/types.js'

export interface CompiledRoute {
  proxy: Proxy
  collection: Collection
  /** `<base_path> <path>`, as the access log names the route. */
  name: string
  /** Names of the path's params in order of their segments. */
  paramNames: string[]
  /** Upstream origin pieces, parsed once. */
  upstream: { protocol: 'http:' | 'https:', hostname: string, port: number, hostHeader: string, basePath: string }
  /** Target path split on params and the wildcard, for cheap substitution. */
  targetParts: Array<string | { param: string } | { wildcard: true }>
  /** Collection then proxy headers (proxy wins), env references resolved; lower-case names. */
  addHeaders: Array<[string, string]>
  addHeaderNames: Set<string>
  timeoutMs: number | null
  /** Request body limit (the proxy's, else MAX_BODY_BYTES). */
  maxBodyBytes: number
  streaming: boolean
  /** Parameter and body validation; null when the proxy declares neither (one check per request). */
  validator: CompiledValidator | null
  /** The enabled workflow that answers instead of the backend, or null. */
  workflow: WorkflowDefinition | null
}

interface TrieNode {
  statics: Map<string, TrieNode>
  param: TrieNode | null
  wildcard: Map<string, CompiledRoute> | null
  leaf: Map<string, CompiledRoute> | null
}

interface CollectionEntry { basePath: string, segments: string[], root: TrieNode }

export interface Match { route: CompiledRoute, params: string[], tail: string }
export type MatchResult = Match | { allow: string[] } | null

const node = (): TrieNode => ({ statics: new Map(), param: null, wildcard: null, leaf: null })

export interface RouteTable {
  size: number
  match (method: string, pathSegments: string[]): MatchResult
}

/** Compiled routes of the previous table by proxy id, with the key they were compiled for. */
export type RouteCache = Map<string, { key: string, route: CompiledRoute | null }>

/**
 * What a compiled route depends on: a record's version and updated_at change with every write;
 * status and the workflow are also set by the trigger-listen overlay without a write.
 */
function routeKey (c: Collection, p: Proxy): string {
  return `${c.version}|${c.updated_at}|${p.version}|${p.updated_at}|${p.status}|${p.workflow_enabled ? JSON.stringify(p.workflow) : '-'}`
}

/**
 * Builds a new table. With `cache` (the previous build's), routes whose proxy and collection did
 * not change are reused, so a change compiles only what it touched (validators, URLs, headers);
 * the cache is refilled with this build's routes only.
 */
export function compileRouteTable (collections: Collection[], proxies: Proxy[], env: Readonly<Record<string, string | undefined>>, warn: (msg: string, data: object) => void, defaultMaxBody = 1024 * 1024, cache?: RouteCache): RouteTable {
  const previous = cache === undefined ? undefined : new Map(cache)
  cache?.clear()
  const byId = new Map<string, CollectionEntry & { collection: Collection }>()
  for (const c of collections) {
    if (c.status !== 'active') continue
    byId.set(c.id, { collection: c, basePath: c.base_path, segments: c.base_path.split('/').filter(Boolean), root: node() })
  }
  let size = 0
  for (const p of proxies) {
    if (p.status !== 'published') continue
    const entry = byId.get(p.collection_id)
    if (entry === undefined) continue
    let route: CompiledRoute | null
    if (cache !== undefined) {
      const key = routeKey(entry.collection, p)
      const hit = previous!.get(p.id)
      route = hit !== undefined && hit.key === key ? hit.route : compileRoute(entry.collection, p, env, warn, defaultMaxBody)
      cache.set(p.id, { key, route })
    } else route = compileRoute(entry.collection, p, env, warn, defaultMaxBody)
    if (route === null) continue
    let n = entry.root
    const segs = p.path.split('/').filter(Boolean)
    let wildcard = false
    for (const s of segs) {
      if (s === '*') { wildcard = true; break }
      if (s.startsWith('{') && s.endsWith('}')) n = n.param ??= node()
      else {
        let next = n.statics.get(s)
        if (next === undefined) n.statics.set(s, next = node())
        n = next
      }
    }
    const slot = wildcard ? (n.wildcard ??= new Map()) : (n.leaf ??= new Map())
    for (const m of p.methods) slot.set(m, route)
    size++
  }
  // Collections in a trie of their base-path segments: a request walks it once, so matching costs
  // the path's depth whatever the number of collections.
  const bases: BaseNode = baseNode()
  for (const e of byId.values()) {
    let n = bases
    for (const seg of e.segments) {
      let next = n.children.get(seg)
      if (next === undefined) n.children.set(seg, next = baseNode())
      n = next
    }
    n.entry = e
  }
  return {
    size,
    match (method, segments) { return matchBase(bases, segments, 0, method) }
  }
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
  if (depth < segs.length) {
    const child = n.children.get(segs[depth])
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
  if (i === segs.length) {
    if (n.leaf !== null) {
      const r = n.leaf.get(method) ?? (method === 'HEAD' ? n.leaf.get('GET') : undefined)
      if (r !== undefined) return { route: r, params: params.slice(), tail: '' }
      allow = { allow: [...n.leaf.keys()] }
    }
  } else {
    const s = n.statics.get(segs[i])
    if (s !== undefined) {
      const m = walk(s, segs, i + 1, params, method)
      if (m !== null && !('allow' in m)) return m
      allow ??= m
    }
    if (n.param !== null && segs[i] !== '') {
      params.push(segs[i])
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

function compileRoute (c: Collection, p: Proxy, env: Readonly<Record<string, string | undefined>>, warn: (msg: string, data: object) => void, defaultMaxBody: number): CompiledRoute | null {
  let url: URL
  try { url = new URL(c.upstream_url) } catch { warn('collection upstream_url is not a URL; its proxies are not served', { collection_id: c.id }); return null }
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
    paramNames: [...p.path.matchAll(/\{([^/}]+)\}/g)].map(m => m[1]),
    upstream: { protocol, hostname: url.hostname.replace(/^\[|\]$/g, ''), port, hostHeader: url.host, basePath: url.pathname.replace(/\/$/, '') },
    targetParts: splitTarget(p.target_path),
    addHeaders: [...headers.entries()],
    addHeaderNames: new Set(headers.keys()),
    timeoutMs: p.timeout_ms,
    maxBodyBytes: p.max_body_bytes ?? defaultMaxBody,
    streaming: p.streaming,
    validator,
    // Gateway traffic starts only http_trigger workflows: a proxy whose workflow starts on its own (cron, broker,
    // IMAP) or from the builder (manual) forwards to its backend like a proxy without a workflow.
    workflow: p.workflow_enabled && p.workflow !== null && startsFromGateway(p.workflow) ? p.workflow : null
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
