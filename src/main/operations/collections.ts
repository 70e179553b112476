/** Collection operations: list, read, create, update, delete, status, duplicate. */
import type { Collection, Page } from '../../common/types.js'
import type { TargetHealth } from '../gateway/index.js'
import { withCorsDefaults } from '../gateway/responses/cors.js'
import { upstreamForCreate, upstreamForUpdate, type UpstreamBody } from '../management/upstream-fields.js'
import { checkCollectionFields } from '../management/validation.js'
import { createCollection, deleteCollection, duplicateCollection, getCollection, listCollections, updateCollection, type CollectionPatch } from '../store/collections.js'
import type { PageQuery } from '../store/rows.js'
import type { Caller, OperationDeps, RecordRef } from './types.js'

type Deps = Pick<OperationDeps, 'store' | 'effects'>

/** A collection write as its schema admits it: the record's fields plus the `upstream_url` shorthand. */
export type CollectionFields = Partial<Omit<Collection, 'id' | 'version' | 'created_at' | 'updated_at'>> & UpstreamBody

/** A `cors` is stored with its defaults filled in, so that reads show what applies. */
const withDefaults = <T extends { cors?: Collection['cors'] }>(body: T): T => body.cors == null ? body : { ...body, cors: withCorsDefaults(body.cors) }

export async function listCollectionsOp (deps: Deps, _caller: Caller, input: { page: PageQuery }): Promise<Page<Collection>> {
  return await listCollections(deps.store, input.page)
}

export async function getCollectionOp (deps: Deps, _caller: Caller, input: RecordRef): Promise<Collection> {
  return await getCollection(deps.store, input.id)
}

export async function createCollectionOp (deps: Deps, caller: Caller, input: { fields: CollectionFields & Pick<Collection, 'name' | 'base_path'> }): Promise<Collection> {
  checkCollectionFields(input.fields)
  const { upstream_url: _shorthand, ...fields } = withDefaults(input.fields)
  const c = await createCollection(deps.store, { ...fields, upstream: upstreamForCreate(input.fields) })
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: c.id, operation: 'created' })
  return c
}

export async function updateCollectionOp (deps: Deps, caller: Caller, input: RecordRef & { fields: CollectionFields }): Promise<Collection> {
  checkCollectionFields(input.fields)
  const { upstream_url: _shorthand, upstream: _upstream, ...fields } = withDefaults(input.fields)
  // The upstream is merged into the stored one inside the update's transaction.
  const c = await updateCollection(deps.store, input.id, fields as CollectionPatch, input.ifMatch, { derive: current => ({ upstream: upstreamForUpdate(current, input.fields) }) })
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: c.id, operation: 'updated' })
  return c
}

export async function deleteCollectionOp (deps: Deps, caller: Caller, input: RecordRef): Promise<Collection> {
  const c = await deleteCollection(deps.store, input.id, input.ifMatch)
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: c.id, operation: 'deleted' })
  return c
}

/** Without a status the collection toggles active <-> disabled. */
export async function setCollectionStatusOp (deps: Deps, caller: Caller, input: RecordRef & { status?: Collection['status'] }): Promise<Collection> {
  const c = await updateCollection(deps.store, input.id, { status: input.status }, input.ifMatch, { toggle: ['active', 'disabled'] })
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: c.id, operation: 'status_changed' })
  return c
}

export async function duplicateCollectionOp (deps: Deps, caller: Caller, input: RecordRef & { name?: string, base_path?: string }): Promise<Collection & { source_collection_id: string, related_collection_id: string, proxy_count: number }> {
  const overrides = { ...(input.name !== undefined ? { name: input.name } : {}), ...(input.base_path !== undefined ? { base_path: input.base_path } : {}) }
  checkCollectionFields(overrides)
  const { collection, proxies } = await duplicateCollection(deps.store, input.id, overrides)
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: input.id, operation: 'duplicated', related_collection_id: collection.id })
  return { ...collection, source_collection_id: input.id, related_collection_id: collection.id, proxy_count: proxies.length }
}

/**
 * This instance's view of the collection's targets. A collection forwarded straight to one IP
 * address (no set of targets to choose from) reads healthy: nothing holds it out.
 */
export async function upstreamHealthOp (deps: { store: OperationDeps['store'], health: (collectionId: string) => TargetHealth[] | null }, _caller: Caller, input: RecordRef): Promise<{ collection_id: string, targets: unknown[] }> {
  const c = await getCollection(deps.store, input.id)
  const seen = deps.health(c.id)
  const targets = seen ?? c.upstream.targets.map(t => ({ url: t.url, weight: t.weight, state: 'healthy' as const, since: c.updated_at, last_error: null, addresses: [] }))
  return { collection_id: c.id, targets }
}
