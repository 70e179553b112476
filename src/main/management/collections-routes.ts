import type { Collection } from '../../common/types.js'
import { createCollection, deleteCollection, duplicateCollection, getCollection, listCollections, updateCollection } from '../store/collections.js'
import type { Router } from './router.js'
import type { ManagementDeps } from './server.js'
import { corsSchema, withCorsDefaults } from '../gateway/responses/cors.js'
import { missingUpstream, upstreamForCreate, upstreamForUpdate, upstreamProblems, upstreamSchema } from './upstream-fields.js'
import { checkCollectionFields, collectionFieldProblems, etag, headersSchema, pageQuery } from './validation.js'

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  base_path: { type: 'string', minLength: 1, maxLength: 512 },
  upstream_url: { type: 'string', minLength: 1, maxLength: 2048, description: 'Backend base URL: the shorthand for an upstream of this one target.' },
  upstream: upstreamSchema,
  status: { type: 'string', enum: ['active', 'disabled'] },
  headers: headersSchema,
  auth_required: { type: 'boolean' },
  cors: corsSchema
}
const createSchema = { type: 'object', additionalProperties: false, required: ['name', 'base_path'], properties: fields }
const updateSchema = { type: 'object', additionalProperties: false, properties: fields }
// Without a status the route toggles active <-> disabled.
const statusSchema = { type: 'object', additionalProperties: false, properties: { status: fields.status } }
const bodyProblems = (b: Record<string, unknown>) => [...collectionFieldProblems(b), ...upstreamProblems(b)]
const createProblems = (b: Record<string, unknown>) => [...missingUpstream(b), ...bodyProblems(b)]
const duplicateSchema = { type: 'object', additionalProperties: false, properties: { name: fields.name, base_path: fields.base_path } }

/** A `cors` is stored with its defaults filled in, so that reads show what applies. */
const withDefaults = <T extends { cors?: Collection['cors'] }>(body: T): T => body.cors == null ? body : { ...body, cors: withCorsDefaults(body.cors) }

export function registerCollectionRoutes (router: Router, deps: ManagementDeps): void {
  const { store, events } = deps
  const changed = (c: Collection, operation: 'created' | 'updated' | 'deleted' | 'status_changed', sub: string | undefined) => {
    events.publish({ resource_kind: 'collection', collection_id: c.id, operation, actor_sub: sub })
    deps.onConfigChange()
  }

  router.add('GET', '/api/v1/collections', async ctx => ({ status: 200, body: await listCollections(store, pageQuery(ctx.query)) }))

  router.add('POST', '/api/v1/collections', async ctx => {
    checkCollectionFields(ctx.body)
    const { upstream_url: _shorthand, ...fields } = withDefaults(ctx.body)
    const c = await createCollection(store, { ...fields, upstream: upstreamForCreate(ctx.body) })
    changed(c, 'created', ctx.user?.sub)
    return { status: 201, body: c, headers: etag(c.version) }
  }, { role: 'editor', body: createSchema, fieldProblems: createProblems })

  router.add('GET', '/api/v1/collections/:id', async ctx => {
    const c = await getCollection(store, ctx.params.id)
    return { status: 200, body: c, headers: etag(c.version) }
  })

  router.add('PUT', '/api/v1/collections/:id', async ctx => {
    checkCollectionFields(ctx.body)
    const { upstream_url: _shorthand, upstream: _upstream, ...fields } = withDefaults(ctx.body)
    // The upstream is merged into the stored one inside the update's transaction.
    const c = await updateCollection(store, ctx.params.id, fields, ctx.ifMatch, { derive: current => ({ upstream: upstreamForUpdate(current, ctx.body) }) })
    changed(c, 'updated', ctx.user?.sub)
    return { status: 200, body: c, headers: etag(c.version) }
  }, { role: 'editor', body: updateSchema, fieldProblems: bodyProblems })

  router.add('DELETE', '/api/v1/collections/:id', async ctx => {
    const c = await deleteCollection(store, ctx.params.id, ctx.ifMatch)
    changed(c, 'deleted', ctx.user?.sub)
    return { status: 204 }
  }, { role: 'editor' })

  router.add('PUT', '/api/v1/collections/:id/status', async ctx => {
    const c = await updateCollection(store, ctx.params.id, { status: ctx.body.status }, ctx.ifMatch, { toggle: ['active', 'disabled'] })
    changed(c, 'status_changed', ctx.user?.sub)
    return { status: 200, body: c, headers: etag(c.version) }
  }, { role: 'editor', body: statusSchema })

  router.add('POST', '/api/v1/collections/:id/duplicate', async ctx => {
    checkCollectionFields(ctx.body ?? {})
    const { collection, proxies } = await duplicateCollection(store, ctx.params.id, ctx.body ?? {})
    events.publish({ resource_kind: 'collection', collection_id: ctx.params.id, operation: 'duplicated', related_collection_id: collection.id, actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return {
      status: 201,
      body: { ...collection, source_collection_id: ctx.params.id, related_collection_id: collection.id, proxy_count: proxies.length },
      headers: etag(collection.version)
    }
  }, { role: 'editor', body: duplicateSchema })
}
