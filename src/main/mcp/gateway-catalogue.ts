/**
 * What the gateway MCP shows an agent: the published proxies of active
 * collections, seen through one profile (the collections it is granted plus
 * public ones, the methods it may use). Built once per configuration change;
 * a view per MCP request is a filter over it.
 */
import type { Collection, HttpMethod, Proxy, ProxyParameter } from '../../common/types.js'
import type { ProfileSnapshot } from '../access/profile-auth.js'

export interface CatalogueEntry { collection: Collection, proxies: Proxy[] }

/** Published proxies of active collections, by collection id. */
export type Catalogue = ReadonlyMap<string, CatalogueEntry>

export function buildCatalogue (collections: readonly Collection[], proxies: readonly Proxy[]): Catalogue {
  const out = new Map<string, CatalogueEntry>()
  for (const c of collections) if (c.status === 'active') out.set(c.id, { collection: c, proxies: [] })
  for (const p of proxies) if (p.status === 'published') out.get(p.collection_id)?.proxies.push(p)
  for (const [id, e] of out) if (e.proxies.length === 0) out.delete(id)
  return out
}

/** One profile's view: what it may call, with the methods it may use. */
export interface ProfileView {
  collections: CatalogueEntry[]
  /** The proxy and its collection, when the profile may call it. */
  endpoint (id: string): { collection: Collection, proxy: Proxy, methods: HttpMethod[] } | null
  collection (idOrPath: string): CatalogueEntry | null
}

export function viewFor (catalogue: Catalogue, p: ProfileSnapshot): ProfileView {
  const methodsOf = (proxy: Proxy): HttpMethod[] =>
    p.allowed_methods === null || p.allowed_methods.length === 0 ? proxy.methods : proxy.methods.filter(m => p.allowed_methods!.includes(m))
  const collections: CatalogueEntry[] = []
  for (const e of catalogue.values()) {
    if (e.collection.auth_required && !p.collection_ids.includes(e.collection.id)) continue
    const proxies = e.proxies.filter(x => methodsOf(x).length > 0)
    if (proxies.length > 0) collections.push({ collection: e.collection, proxies })
  }
  const byId = new Map<string, { collection: Collection, proxy: Proxy, methods: HttpMethod[] }>()
  for (const e of collections) for (const proxy of e.proxies) byId.set(proxy.id, { collection: e.collection, proxy, methods: methodsOf(proxy) })
  return {
    collections,
    endpoint: id => byId.get(id) ?? null,
    collection: key => collections.find(e => e.collection.id === key || e.collection.base_path === key || e.collection.name === key) ?? null
  }
}

/** The path an agent calls on the gateway: base path plus proxy path (`{param}` and `/*` kept). */
export const gatewayPath = (c: Collection, p: Proxy): string => (c.base_path === '/' ? '' : c.base_path) + (p.path === '/' && c.base_path !== '/' ? '' : p.path)

const PARAM = /\{([^}/]+)\}/g

/** The endpoint's parameters: declared ones, plus undeclared `{param}` segments and the `/*` tail. */
export function parametersOf (p: Proxy): ProxyParameter[] {
  const out = [...p.parameters]
  for (const m of p.path.matchAll(PARAM)) {
    const name = m[1]! // PARAM's group 1 always takes part
    if (!out.some(x => x.location === 'path' && x.name === name)) out.push({ name, location: 'path', type: 'string', required: true })
  }
  if (p.path.endsWith('/*')) out.push({ name: 'wildcard', location: 'path', type: 'string', required: false, description: 'The rest of the path matched by /* (may contain slashes).' })
  return out
}

/**
 * The concrete path for a call: `{param}`s replaced (each value one encoded segment), `/*`
 * replaced by the `wildcard` value (its segments encoded one by one). Throws a message on a missing parameter.
 */
export function fillPath (template: string, params: Record<string, unknown>): string {
  let path = template.replace(PARAM, (_, name: string) => {
    const v = params[name]
    if (v === undefined || v === null || v === '') throw new Error(`The path parameter '${name}' is required (path_params.${name}).`)
    return encodeURIComponent(String(v))
  })
  if (path.endsWith('/*')) {
    const tail = params.wildcard === undefined || params.wildcard === null ? '' : String(params.wildcard).replace(/^\/+/, '')
    path = path.slice(0, -1) + tail.split('/').map(encodeURIComponent).join('/')
    if (path.endsWith('/') && path.length > 1) path = path.slice(0, -1)
  }
  return path === '' ? '/' : path
}

/** An example value for a JSON Schema (its example, default, first enum value, or one by type). */
export function exampleOf (schema: unknown, depth = 0): unknown {
  if (schema === null || typeof schema !== 'object' || depth > 6) return null
  const s = schema as Record<string, any>
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0]
  if (s.example !== undefined) return s.example
  if (s.default !== undefined) return s.default
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if (s.const !== undefined) return s.const
  for (const k of ['oneOf', 'anyOf', 'allOf']) if (Array.isArray(s[k]) && s[k].length > 0) return exampleOf(s[k][0], depth + 1)
  const type = Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type
  switch (type ?? (s.properties !== undefined ? 'object' : undefined)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const props = (s.properties ?? {}) as Record<string, unknown>
      const required = new Set<string>(Array.isArray(s.required) ? s.required : Object.keys(props))
      for (const [k, v] of Object.entries(props)) if (required.has(k)) out[k] = exampleOf(v, depth + 1)
      return out
    }
    case 'array': return s.items === undefined ? [] : [exampleOf(s.items, depth + 1)]
    case 'integer': case 'number': return s.minimum ?? 1
    case 'boolean': return true
    case 'string': return s.format === 'date-time' ? '2026-01-01T00:00:00Z' : s.format === 'email' ? 'user@example.com' : 'text'
    default: return null
  }
}

/** An example value for a parameter of the given type. */
export function exampleParam (p: ProxyParameter): unknown {
  if (p.default !== undefined) return p.default
  return p.type === 'integer' || p.type === 'number' ? 1 : p.type === 'boolean' ? true : p.name === 'wildcard' ? 'some/path' : 'value'
}
