import { randomUUID } from 'node:crypto'
import { conflict, notFound, preconditionFailed } from '../../common/errors.js'
import type { Page, Proxy } from '../../common/types.js'
import { routeKey } from './route-key.js'
import { bumpConfigVersion, iso, json, page, type PageQuery } from './rows.js'
import { isUniqueViolation, type Queryable, type Store } from './types.js'

export type ProxyInput = Pick<Proxy, 'collection_id' | 'name' | 'methods' | 'path' | 'target_path'> &
  Partial<Omit<Proxy, 'id' | 'version' | 'created_at' | 'updated_at' | 'workflow_id' | 'collection_id' | 'name' | 'methods' | 'path' | 'target_path'>>
export type ProxyPatch = Partial<Omit<Proxy, 'id' | 'version' | 'created_at' | 'updated_at' | 'workflow_id'>>

const FIELDS = ['collection_id', 'name', 'description', 'methods', 'path', 'target_path', 'headers', 'parameters', 'request_schema',
  'response_schema', 'streaming', 'status', 'workflow_enabled', 'workflow', 'timeout_ms', 'max_body_bytes', 'cache', 'compression', 'apply_parameter_defaults', 'websocket'] as const
const JSON_FIELDS = new Set(['methods', 'headers', 'parameters', 'request_schema', 'response_schema', 'workflow', 'cache'])

export function toProxy (r: any): Proxy {
  return {
    id: r.id,
    collection_id: r.collection_id,
    name: r.name,
    description: r.description,
    methods: json(r.methods),
    path: r.path,
    target_path: r.target_path,
    headers: json(r.headers),
    parameters: json(r.parameters),
    request_schema: json(r.request_schema),
    response_schema: json(r.response_schema),
    streaming: r.streaming,
    status: r.status,
    workflow_enabled: r.workflow_enabled,
    workflow: json(r.workflow),
    workflow_id: r.workflow_id,
    timeout_ms: r.timeout_ms === null ? null : Number(r.timeout_ms),
    max_body_bytes: r.max_body_bytes === null || r.max_body_bytes === undefined ? null : Number(r.max_body_bytes),
    cache: r.cache === undefined ? null : json(r.cache),
    compression: r.compression ?? true,
    apply_parameter_defaults: r.apply_parameter_defaults ?? false,
    websocket: r.websocket ?? false,
    version: Number(r.version),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at)
  }
}

export async function getProxy (q: Queryable, id: string): Promise<Proxy> {
  const { rows } = await q.query('SELECT * FROM proxies WHERE id = $1', [id])
  if (rows.length === 0) throw notFound(`Proxy '${id}' does not exist.`)
  return toProxy(rows[0])
}

export async function listProxies (q: Queryable, pq: PageQuery, filter: { collection_id?: string, publishedOnly?: boolean }): Promise<Page<Proxy>> {
  const published = filter.publishedOnly === true ? " AND status = 'published'" : ''
  if (filter.collection_id !== undefined) return await page(q, `SELECT * FROM proxies WHERE collection_id = $1${published}`, [filter.collection_id], pq, toProxy)
  return await page(q, `SELECT * FROM proxies WHERE true${published}`, [], pq, toProxy)
}

export async function listProxiesOf (q: Queryable, collectionId: string): Promise<Proxy[]> {
  const { rows } = await q.query('SELECT * FROM proxies WHERE collection_id = $1 ORDER BY seq', [collectionId])
  return rows.map(toProxy)
}

async function assertCollection (q: Queryable, id: string): Promise<void> {
  const { rows } = await q.query('SELECT 1 FROM collections WHERE id = $1', [id])
  if (rows.length === 0) throw notFound(`Collection '${id}' does not exist.`, )
}

/**
 * Every proxy claims (collection, path shape, method). A claim held by another
 * proxy is a 409 naming it, so two proxies never answer the same request.
 */
async function claimRoutes (q: Queryable, p: Pick<Proxy, 'id' | 'collection_id' | 'path' | 'methods'>): Promise<void> {
  await q.query('DELETE FROM proxy_routes WHERE proxy_id = $1', [p.id])
  const key = routeKey(p.path)
  const { rows } = await q.query<{ name: string, method: string }>(
    `SELECT p.name, r.method FROM proxy_routes r JOIN proxies p ON p.id = r.proxy_id
     WHERE r.collection_id = $1 AND r.route_key = $2 AND r.method = ANY($3::text[])`,
    [p.collection_id, key, p.methods])
  const [taken] = rows
  if (taken !== undefined) throw routeTaken(p.path, taken.method, taken.name)
  for (const m of p.methods) {
    try {
      await q.query('INSERT INTO proxy_routes (collection_id, route_key, method, proxy_id) VALUES ($1, $2, $3, $4)', [p.collection_id, key, m, p.id])
    } catch (err) {
      if (isUniqueViolation(err)) throw routeTaken(p.path, m, 'another proxy')
      throw err
    }
  }
}

const routeTaken = (path: string, method: string, other: string) =>
  conflict(`${method} ${path} is already served by proxy '${other}' in this collection.`, [{ field: 'path', message: `${method} ${path} is already served by proxy '${other}'` }])

export async function hasClaims (q: Queryable, id: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM proxy_routes WHERE proxy_id = $1 LIMIT 1', [id])).rows.length > 0
}

/** Inserts a proxy row (inside a caller's transaction). `claim: false` keeps a same-collection copy unclaimed until it changes. */
export async function insertProxyRow (q: Queryable, input: ProxyInput, opts: { claim?: boolean } = {}): Promise<Proxy> {
  const { rows } = await q.query(
    `INSERT INTO proxies (id, collection_id, name, description, methods, path, target_path, headers, parameters, request_schema,
       response_schema, streaming, status, workflow_enabled, workflow, workflow_id, timeout_ms, max_body_bytes, cache, compression, apply_parameter_defaults, websocket)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) RETURNING *`,
    [randomUUID(), input.collection_id, input.name, input.description ?? '', JSON.stringify(input.methods), input.path, input.target_path,
      JSON.stringify(input.headers ?? []), JSON.stringify(input.parameters ?? []), jsonOrNull(input.request_schema),
      jsonOrNull(input.response_schema), input.streaming ?? false, input.status ?? 'draft', input.workflow_enabled ?? false,
      jsonOrNull(input.workflow), randomUUID(), input.timeout_ms ?? null, input.max_body_bytes ?? null, jsonOrNull(input.cache), input.compression ?? true, input.apply_parameter_defaults ?? false, input.websocket ?? false])
  const proxy = toProxy(rows[0])
  if (opts.claim !== false) await claimRoutes(q, proxy)
  return proxy
}

const jsonOrNull = (v: unknown) => v === undefined || v === null ? null : JSON.stringify(v)

export async function createProxy (store: Store, input: ProxyInput): Promise<Proxy> {
  return await store.tx(async q => {
    await assertCollection(q, input.collection_id)
    const p = await insertProxyRow(q, input)
    await bumpConfigVersion(q, 'proxy', p.id)
    return p
  })
}

async function lockProxy (q: Queryable, id: string): Promise<Proxy> {
  const { rows } = await q.query('SELECT * FROM proxies WHERE id = $1 FOR UPDATE', [id])
  if (rows.length === 0) throw notFound(`Proxy '${id}' does not exist.`)
  return toProxy(rows[0])
}

/** Applies a patch inside a transaction; returns the proxy before and after. */
export async function patchProxy (q: Queryable, id: string, patch: ProxyPatch, ifVersion?: number): Promise<{ before: Proxy, after: Proxy }> {
  const before = await lockProxy(q, id)
  if (ifVersion !== undefined && ifVersion !== before.version) throw preconditionFailed()
  if (patch.collection_id !== undefined && patch.collection_id !== before.collection_id) await assertCollection(q, patch.collection_id)
  const sets: string[] = []
  const params: unknown[] = [id]
  for (const f of FIELDS) {
    if (patch[f] === undefined) continue
    params.push(JSON_FIELDS.has(f) ? jsonOrNull(patch[f]) : patch[f])
    sets.push(`${f} = $${params.length}`)
  }
  const { rows } = await q.query(
    `UPDATE proxies SET ${[...sets, 'version = version + 1', 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`, params)
  const after = toProxy(rows[0])
  const routing = patch.path !== undefined || patch.methods !== undefined || patch.collection_id !== undefined || after.status === 'published'
  if (routing || await hasClaims(q, id)) await claimRoutes(q, after)
  await bumpConfigVersion(q, 'proxy', id)
  return { before, after }
}

export async function updateProxy (store: Store, id: string, patch: ProxyPatch, ifVersion?: number): Promise<Proxy> {
  return await store.tx(async q => (await patchProxy(q, id, patch, ifVersion)).after)
}

export async function deleteProxy (store: Store, id: string, ifVersion?: number): Promise<Proxy> {
  return await store.tx(async q => {
    const current = await lockProxy(q, id)
    if (ifVersion !== undefined && ifVersion !== current.version) throw preconditionFailed()
    await q.query('DELETE FROM proxies WHERE id = $1', [id])
    await bumpConfigVersion(q, 'proxy', id)
    return current
  })
}

/** Copies a proxy as a draft into the same or another collection. */
export async function duplicateProxy (store: Store, id: string, opts: { collection_id?: string, name?: string, path?: string }): Promise<Proxy> {
  return await store.tx(async q => {
    const source = await getProxy(q, id)
    const target = opts.collection_id ?? source.collection_id
    if (target !== source.collection_id) await assertCollection(q, target)
    const path = opts.path ?? source.path
    const sameRoute = target === source.collection_id && routeKey(path) === routeKey(source.path)
    const copy = await insertProxyRow(q, {
      ...source, collection_id: target, name: opts.name ?? `${source.name} (copy)`, path, status: 'draft'
    }, { claim: !sameRoute })
    await bumpConfigVersion(q, 'proxy', copy.id)
    return copy
  })
}

/** Proxies that carry a workflow (one, or all in creation order), with whether their collection is active. */
export async function listWorkflowProxies (q: Queryable, proxyId?: string): Promise<Array<{ proxy: Proxy, collectionActive: boolean }>> {
  const r = await q.query(`SELECT p.*, c.status AS collection_status FROM proxies p JOIN collections c ON c.id = p.collection_id
    WHERE p.workflow IS NOT NULL${proxyId !== undefined ? ' AND p.id = $1' : ''} ORDER BY p.seq`, proxyId !== undefined ? [proxyId] : [])
  return r.rows.map(row => ({ proxy: toProxy(row), collectionActive: row.collection_status === 'active' }))
}
