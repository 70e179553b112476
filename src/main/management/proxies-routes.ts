import { notFound, validationFailed } from '../../common/errors.js'
import type { Proxy } from '../../common/types.js'
import type { User } from '../auth/verifier.js'
import { createProxy, deleteProxy, duplicateProxy, getProxy, listProxies, patchProxy, updateProxy } from '../store/proxies.js'
import type { Router } from './router.js'
import { cacheSchema } from '../gateway/responses/cache-policy.js'
import { ajv } from '../validation/ajv.js'
import type { ManagementDeps } from './server.js'
import { checkProxyPaths, etag, headersSchema, pageQuery, proxyBodyProblems } from './validation.js'

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']
const fields = {
  collection_id: { type: 'string', minLength: 1, maxLength: 100 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  methods: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: METHODS } },
  path: { type: 'string', minLength: 1, maxLength: 1024 },
  target_path: { type: 'string', minLength: 1, maxLength: 1024 },
  headers: headersSchema,
  parameters: {
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'location'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100 },
        location: { type: 'string', enum: ['path', 'query'] },
        type: { type: 'string', enum: ['string', 'integer', 'number', 'boolean'], default: 'string' },
        required: { type: 'boolean', default: false },
        default: {},
        description: { type: 'string', maxLength: 2000 }
      }
    }
  },
  request_schema: { type: ['object', 'null'] },
  response_schema: { type: ['object', 'null'] },
  streaming: { type: 'boolean' },
  status: { type: 'string', enum: ['draft', 'published'] },
  timeout_ms: { type: ['integer', 'null'], minimum: 1, maximum: 3_600_000 },
  max_body_bytes: { type: ['integer', 'null'], minimum: 1, maximum: 1_073_741_824 },
  websocket: { type: 'boolean', description: 'Relay WebSocket upgrades (Upgrade: websocket) to the backend after the same access checks as any call; frames go both ways until either side closes (default false).' },
  apply_parameter_defaults: { type: 'boolean', description: 'Add a query parameter\'s default to the forwarded query when the caller omits it (default false: the backend sees the query as sent; defaults still pre-fill the developer portal).' },
  cache: cacheSchema,
  compression: { type: 'boolean', description: 'Compress answers (gzip or Brotli, by Accept-Encoding) for clients that accept it (default true; COMPRESSION=off turns it off everywhere; never for streaming proxies).' }
}
/** Proxy fields a client may send back as it read them; the workflow routes set them. */
const READ_ONLY = ['workflow_enabled', 'workflow', 'workflow_id']
const createSchema = { type: 'object', additionalProperties: false, required: ['collection_id', 'name', 'methods', 'path'], properties: fields }
const updateSchema = { type: 'object', additionalProperties: false, properties: fields }
const duplicateSchema = { type: 'object', additionalProperties: false, properties: { collection_id: fields.collection_id, name: fields.name, path: fields.path } }
const bulkSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'ids'],
  properties: {
    action: { type: 'string', enum: ['publish', 'unpublish', 'delete'] },
    ids: { type: 'array', minItems: 1, maxItems: 500, uniqueItems: true, items: { type: 'string', minLength: 1 } }
  }
}

function checkSchemas (body: Partial<Proxy>): void {
  for (const f of ['request_schema', 'response_schema'] as const) {
    const s = body[f]
    if (s === undefined || s === null) continue
    try { ajv.compile(s) } catch (err) {
      throw validationFailed(`${f} is not a valid JSON Schema: ${(err as Error).message}.`, [{ field: f, message: `is not a valid JSON Schema: ${(err as Error).message}` }])
    }
  }
}

/** A viewer reads published proxies only (drafts are for the roles that can change them). */
export const seesPublishedOnly = (user: User | null): boolean => user?.role === 'viewer'

/** The proxy, or the 404 a viewer gets for a draft (as if it did not exist). */
export function visibleProxy (p: Proxy, user: User | null): Proxy {
  if (p.status !== 'published' && seesPublishedOnly(user)) throw notFound(`Proxy '${p.id}' does not exist.`)
  return p
}

export function registerProxyRoutes (router: Router, deps: ManagementDeps): void {
  const { store, events } = deps
  const changed = (p: Proxy, operation: 'created' | 'updated' | 'deleted', sub: string | undefined) => {
    events.publish({ resource_kind: 'proxy', proxy_id: p.id, collection_id: p.collection_id, operation, actor_sub: sub })
  }

  // Drafts are work in progress: visible to the roles that can change them (editor, admin), not to viewers.
  router.add('GET', '/api/v1/proxies', async ctx => ({
    status: 200,
    body: await listProxies(store, pageQuery(ctx.query, { filters: ['collection_id'] }), { collection_id: ctx.query.get('collection_id') ?? undefined, publishedOnly: seesPublishedOnly(ctx.user) })
  }))

  router.add('POST', '/api/v1/proxies', async ctx => {
    const body = { ...ctx.body, target_path: ctx.body.target_path ?? ctx.body.path }
    checkProxyPaths(body.path, body.target_path, ctx.body.target_path !== undefined)
    checkSchemas(body)
    const p = await createProxy(store, body)
    changed(p, 'created', ctx.user?.sub)
    deps.onConfigChange()
    return { status: 201, body: p, headers: etag(p.version) }
  }, { role: 'editor', body: createSchema, readOnly: READ_ONLY, fieldProblems: proxyBodyProblems })

  // Registered before '/api/v1/proxies/:id' routes so the static segment wins.
  router.add('POST', '/api/v1/proxies/bulk', async ctx => {
    const { action, ids } = ctx.body as { action: 'publish' | 'unpublish' | 'delete', ids: string[] }
    const results = []
    for (const id of ids) {
      try {
        if (action === 'delete') {
          const p = await deleteProxy(store, id)
          changed(p, 'deleted', ctx.user?.sub)
        } else {
          const p = await updateProxy(store, id, { status: action === 'publish' ? 'published' : 'draft' })
          changed(p, 'updated', ctx.user?.sub)
        }
        results.push({ id, ok: true })
      } catch (err) {
        const e = err as { status?: number, code?: string, message?: string }
        if (e.status === undefined) throw err
        results.push({ id, ok: false, error: { code: e.code, message: e.message } })
      }
    }
    deps.onConfigChange()
    const failed = results.filter(r => !r.ok).length
    return { status: 200, body: { action, succeeded: results.length - failed, failed, results } }
  }, { role: 'editor', body: bulkSchema })

  router.add('GET', '/api/v1/proxies/:id', async ctx => {
    const p = visibleProxy(await getProxy(store, ctx.params.id), ctx.user)
    return { status: 200, body: p, headers: etag(p.version) }
  })

  router.add('PUT', '/api/v1/proxies/:id', async ctx => {
    checkSchemas(ctx.body)
    const p = await store.tx(async q => {
      const current = await getProxy(q, ctx.params.id)
      checkProxyPaths(ctx.body.path ?? current.path, ctx.body.target_path ?? current.target_path)
      return (await patchProxy(q, ctx.params.id, ctx.body, ctx.ifMatch)).after
    })
    changed(p, 'updated', ctx.user?.sub)
    deps.onConfigChange()
    return { status: 200, body: p, headers: etag(p.version) }
  }, { role: 'editor', body: updateSchema, readOnly: READ_ONLY })

  router.add('DELETE', '/api/v1/proxies/:id', async ctx => {
    const p = await deleteProxy(store, ctx.params.id, ctx.ifMatch)
    changed(p, 'deleted', ctx.user?.sub)
    deps.onConfigChange()
    return { status: 204 }
  }, { role: 'editor' })

  router.add('POST', '/api/v1/proxies/:id/duplicate', async ctx => {
    const body = ctx.body ?? {}
    if (body.path !== undefined) {
      const source = await getProxy(store, ctx.params.id)
      checkProxyPaths(body.path, source.target_path)
    }
    const p = await duplicateProxy(store, ctx.params.id, body)
    changed(p, 'created', ctx.user?.sub)
    deps.onConfigChange()
    return { status: 201, body: p, headers: etag(p.version) }
  }, { role: 'editor', body: duplicateSchema })
}
