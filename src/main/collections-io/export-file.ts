/**
 * The collection export file: collections with their proxies and workflow definitions,
 * without ids, versions or timestamps, so that it can be imported anywhere. It holds no
 * secrets: credentials are never part of it (workflow nodes keep only `credentials_id`
 * references) and environment-variable headers stay references; static header values are
 * configuration and are kept as they are.
 */
import type { Collection, HeaderSpec, Proxy, WorkflowDefinition } from '../../common/types.js'
import { defaultUpstream, type UpstreamInput } from '../../common/upstream-settings.js'

export const EXPORT_FORMAT = 'gatehouse.collection'
export const EXPORT_FORMAT_VERSION = 1

export type ExportedCollection =
  Pick<Collection, 'name' | 'description' | 'base_path' | 'status' | 'headers' | 'auth_required' | 'cors'> &
  { upstream_url?: string, upstream?: UpstreamInput }

export type ExportedProxy = Pick<Proxy, 'name' | 'description' | 'methods' | 'path' | 'target_path' | 'headers' |
'parameters' | 'request_schema' | 'response_schema' | 'streaming' | 'status' | 'workflow_enabled' | 'workflow' | 'timeout_ms' | 'max_body_bytes'> & Partial<Pick<Proxy, 'cache' | 'compression' | 'apply_parameter_defaults' | 'websocket'>>

export interface ExportedItem {
  collection: ExportedCollection
  proxies: ExportedProxy[]
}

export interface ExportFile {
  format: typeof EXPORT_FORMAT
  format_version: typeof EXPORT_FORMAT_VERSION
  /** Set by every export; optional in a hand-written file. */
  exported_at?: string
  collections: ExportedItem[]
}

/**
 * Builds the export file of one or more collections. Fields are copied by name (a field
 * added to the records later is not exported by accident) and deeply, so the file shares
 * nothing with the records it came from.
 */
export function exportCollections (items: Array<{ collection: Collection, proxies: Proxy[] }>, now = new Date()): ExportFile {
  return {
    format: EXPORT_FORMAT,
    format_version: EXPORT_FORMAT_VERSION,
    exported_at: now.toISOString(),
    collections: items.map(({ collection: c, proxies }) => ({
      collection: {
        name: c.name,
        description: c.description ?? '',
        base_path: c.base_path,
        ...(c.upstream_url !== undefined ? { upstream_url: c.upstream_url } : {}),
        // Only when it says more than upstream_url does (several targets, or settings of its own).
        ...(saysMore(c) ? { upstream: structuredClone(c.upstream) } : {}),
        status: c.status,
        headers: headersOf(c.headers),
        auth_required: c.auth_required,
        cors: c.cors == null ? null : structuredClone(c.cors)
      },
      proxies: proxies.map(exportProxy)
    }))
  }
}

function exportProxy (p: Proxy): ExportedProxy {
  return {
    name: p.name,
    description: p.description ?? '',
    methods: [...p.methods],
    path: p.path,
    target_path: p.target_path,
    headers: headersOf(p.headers),
    parameters: p.parameters.map(q => structuredClone(q)),
    request_schema: p.request_schema === null ? null : structuredClone(p.request_schema),
    response_schema: p.response_schema === null ? null : structuredClone(p.response_schema),
    streaming: p.streaming,
    status: p.status,
    workflow_enabled: p.workflow_enabled,
    workflow: p.workflow === null ? null : workflowOf(p.workflow),
    timeout_ms: p.timeout_ms ?? null,
    max_body_bytes: p.max_body_bytes ?? null,
    // Written only when on, so files of proxies that keep the default read as before.
    ...(p.apply_parameter_defaults ? { apply_parameter_defaults: true } : {}),
    ...(p.websocket ? { websocket: true } : {}),
    ...(p.compression === false ? { compression: false } : {}),
    ...(p.cache != null ? { cache: { ttl_s: p.cache.ttl_s, vary: [...p.cache.vary], shared: p.cache.shared } } : {})
  }
}

/** A header is either a static value or an environment reference, never both. */
export const headersOf = (headers: HeaderSpec[] | undefined): HeaderSpec[] =>
  (headers ?? []).map(h => 'env' in h ? { name: h.name, env: h.env } : { name: h.name, value: h.value })

function workflowOf (w: WorkflowDefinition): WorkflowDefinition {
  const out: WorkflowDefinition = {
    nodes: w.nodes.map(n => {
      const node: WorkflowDefinition['nodes'][number] = { id: n.id, name: n.name, type: n.type, settings: structuredClone(n.settings ?? {}) }
      if (n.position !== undefined) node.position = { x: n.position.x, y: n.position.y }
      return node
    }),
    edges: w.edges.map(e => {
      const edge: WorkflowDefinition['edges'][number] = { id: e.id, source: e.source, target: e.target }
      if (e.sourceHandle !== undefined) edge.sourceHandle = e.sourceHandle
      if (e.targetHandle !== undefined) edge.targetHandle = e.targetHandle
      return edge
    })
  }
  if (w.runtime_settings !== undefined) out.runtime_settings = { ...w.runtime_settings }
  return out
}

function saysMore (c: Collection): boolean {
  const u = c.upstream
  if (u === undefined) return false
  return u.targets.length !== 1 || JSON.stringify(u) !== JSON.stringify(defaultUpstream([{ url: u.targets[0]!.url, weight: 100 }])) // length is 1 here
}
