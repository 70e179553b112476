import { randomUUID } from 'node:crypto'
import { conflict, notFound, preconditionFailed } from '../../common/errors.js'
import type { Collection, Page, Proxy, UpstreamSettings } from '../../common/types.js'
import { storedUpstream } from '../../common/upstream-settings.js'
import { hasClaims, insertProxyRow, listProxiesOf } from './proxies.js'
import { bumpConfigVersion, iso, json, page, type PageQuery } from './rows.js'
import { isUniqueViolation, type Queryable, type Store } from './types.js'

/** `upstream` is the whole object (the routes merge a write into it); `upstream_url` is not stored apart from it. */
export type CollectionInput = Pick<Collection, 'name' | 'base_path' | 'upstream'> & Partial<Pick<Collection, 'description' | 'status' | 'headers' | 'auth_required' | 'cors'>>
export type CollectionPatch = Partial<Omit<Collection, 'id' | 'version' | 'created_at' | 'updated_at' | 'upstream_url'>>

const FIELDS = ['name', 'description', 'base_path', 'upstream', 'status', 'headers', 'auth_required', 'cors'] as const
const JSON_FIELDS = new Set(['headers', 'upstream', 'cors'])

export function toCollection (r: any): Collection {
  const upstream = storedUpstream(r.upstream === null || r.upstream === undefined ? null : json<UpstreamSettings>(r.upstream), r.upstream_url)
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    base_path: r.base_path,
    // The shorthand is shown only when it says everything about the targets.
    ...(upstream.targets.length === 1 ? { upstream_url: upstream.targets[0]!.url } : {}),
    upstream,
    status: r.status,
    headers: json(r.headers),
    auth_required: r.auth_required,
    cors: r.cors === undefined ? null : json(r.cors),
    version: Number(r.version),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at)
  }
}

export async function getCollection (q: Queryable, id: string): Promise<Collection> {
  const { rows } = await q.query('SELECT * FROM collections WHERE id = $1', [id])
  if (rows.length === 0) throw notFound(`Collection '${id}' does not exist.`)
  return toCollection(rows[0])
}

export async function listCollections (q: Queryable, pq: PageQuery): Promise<Page<Collection>> {
  return await page(q, 'SELECT * FROM collections WHERE true', [], pq, toCollection)
}

async function assertBasePathFree (q: Queryable, basePath: string, exceptId?: string): Promise<void> {
  const { rows } = await q.query<{ id: string, name: string }>('SELECT id, name FROM collections WHERE base_path = $1 AND id <> $2', [basePath, exceptId ?? ''])
  if (rows[0] !== undefined) throw basePathTaken(basePath, rows[0].name)
}

const basePathTaken = (basePath: string, other: string) =>
  conflict(`base_path '${basePath}' is already used by collection '${other}'.`, [{ field: 'base_path', message: `is already used by collection '${other}'` }])

/** Inserts a collection (inside a caller's transaction); 409 when its base_path is taken. */
export async function insertCollection (q: Queryable, input: CollectionInput): Promise<Collection> {
  await assertBasePathFree(q, input.base_path)
  try {
    const { rows } = await q.query(
      `INSERT INTO collections (id, name, description, base_path, upstream_url, upstream, status, headers, auth_required, cors)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [randomUUID(), input.name, input.description ?? '', input.base_path, input.upstream.targets[0]?.url ?? '', JSON.stringify(input.upstream),
        input.status ?? 'active', JSON.stringify(input.headers ?? []), input.auth_required ?? true, input.cors == null ? null : JSON.stringify(input.cors)])
    return toCollection(rows[0])
  } catch (err) {
    if (isUniqueViolation(err)) throw basePathTaken(input.base_path, 'another collection')
    throw err
  }
}

export async function createCollection (store: Store, input: CollectionInput): Promise<Collection> {
  return await store.tx(async q => {
    const c = await insertCollection(q, input)
    await bumpConfigVersion(q, 'collection', c.id)
    return c
  })
}

function checkVersion (current: Collection | Proxy, ifVersion: number | undefined): void {
  if (ifVersion !== undefined && ifVersion !== current.version) throw preconditionFailed()
}

export { checkVersion }

/**
 * Applies `patch`; with `toggle`, a patch without a status flips the status between the two values;
 * `derive` adds fields computed from the locked current record (a partial upstream merged into it).
 */
export async function updateCollection (store: Store, id: string, patch: CollectionPatch, ifVersion?: number, opts: { toggle?: [Collection['status'], Collection['status']], derive?: (current: Collection) => CollectionPatch } = {}): Promise<Collection> {
  return await store.tx(async q => {
    const current = await lockCollection(q, id)
    checkVersion(current, ifVersion)
    if (opts.derive !== undefined) patch = { ...patch, ...opts.derive(current) }
    if (opts.toggle !== undefined && patch.status === undefined) patch = { ...patch, status: current.status === opts.toggle[0] ? opts.toggle[1] : opts.toggle[0] }
    if (patch.base_path !== undefined && patch.base_path !== current.base_path) await assertBasePathFree(q, patch.base_path, id)
    try {
      const c = await setCollectionFields(q, id, patch)
      await bumpConfigVersion(q, 'collection', id)
      return c
    } catch (err) {
      if (isUniqueViolation(err)) throw basePathTaken(String(patch.base_path), 'another collection')
      throw err
    }
  })
}

/** Writes the fields `patch` gives (in the caller's transaction; no version bump, no checks). */
export async function setCollectionFields (q: Queryable, id: string, patch: CollectionPatch): Promise<Collection> {
  const sets: string[] = []
  const params: unknown[] = [id]
  for (const f of FIELDS) {
    if (patch[f] === undefined) continue
    params.push(JSON_FIELDS.has(f) ? (patch[f] === null ? null : JSON.stringify(patch[f])) : patch[f])
    sets.push(`${f} = $${params.length}`)
  }
  // upstream_url stays the first target's URL (what rows from before upstreams hold).
  if (patch.upstream !== undefined) { params.push(patch.upstream.targets[0]?.url ?? ''); sets.push(`upstream_url = $${params.length}`) }
  const { rows } = await q.query(
    `UPDATE collections SET ${[...sets, 'version = version + 1', 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING *`, params)
  return toCollection(rows[0])
}

async function lockCollection (q: Queryable, id: string): Promise<Collection> {
  const { rows } = await q.query('SELECT * FROM collections WHERE id = $1 FOR UPDATE', [id])
  if (rows.length === 0) throw notFound(`Collection '${id}' does not exist.`)
  return toCollection(rows[0])
}

/** Deletes the collection and, by cascade, its proxies. */
export async function deleteCollection (store: Store, id: string, ifVersion?: number): Promise<Collection> {
  return await store.tx(async q => {
    const current = await lockCollection(q, id)
    checkVersion(current, ifVersion)
    await q.query('DELETE FROM collections WHERE id = $1', [id])
    await bumpConfigVersion(q, 'collection', id)
    return current
  })
}

/** Copies a collection with all its proxies; the copies are drafts with new ids. */
export async function duplicateCollection (store: Store, id: string, opts: { name?: string, base_path?: string }): Promise<{ collection: Collection, proxies: Proxy[] }> {
  return await store.tx(async q => {
    const source = await getCollection(q, id)
    const basePath = opts.base_path ?? await freeCopyPath(q, source.base_path)
    const collection = await insertCollection(q, {
      ...source, name: opts.name ?? `${source.name} (copy)`, base_path: basePath
    })
    const proxies: Proxy[] = []
    for (const p of await listProxiesOf(q, id)) {
      // A copy claims its route exactly when its source does (unclaimed drafts stay unclaimed).
      proxies.push(await insertProxyRow(q, { ...p, collection_id: collection.id, status: 'draft' }, { claim: await hasClaims(q, p.id) }))
    }
    await bumpConfigVersion(q, 'collection', collection.id)
    return { collection, proxies }
  })
}

async function freeCopyPath (q: Queryable, basePath: string): Promise<string> {
  const stem = basePath === '/' ? '/copy' : `${basePath}-copy`
  for (let i = 1; i <= 1000; i++) {
    const candidate = i === 1 ? stem : `${stem}-${i}`
    const { rows } = await q.query('SELECT 1 FROM collections WHERE base_path = $1', [candidate])
    if (rows.length === 0) return candidate
  }
  throw conflict(`No free base_path found for a copy of '${basePath}'; give one in the request.`)
}
