/**
 * Collection files and OpenAPI documents in and out:
 *
 *   GET  /collections/:id/export        one collection as a gatehouse.collection file
 *   GET  /collections/export?ids=a,b    several (all when no ids) in one file
 *   GET  /collections/:id/openapi       OpenAPI 3.0/3.1 of its (published) proxies
 *   POST /collections/import            a file (multipart part `file`, or JSON) -> collections
 *   POST /collections/import/openapi    an OpenAPI document -> one collection of draft proxies
 *
 * Imports create everything in one transaction: a conflict (409) or an invalid part (400)
 * creates nothing.
 */
import { AppError, badRequest, invalidJson, unsupportedMediaType, validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import type { User } from '../auth/verifier.js'
import { seesPublishedOnly } from './proxies-routes.js'
import { exportCollections, type ExportFile } from '../collections-io/export-file.js'
import { IMPORT_LIMITS } from '../collections-io/export-file-schema.js'
import { MAX_IMPORT_FILE_BYTES, parseImportFile } from '../collections-io/import-file.js'
import { parseMultipart, requirePart } from '../collections-io/multipart.js'
import { toOpenApi } from '../collections-io/openapi-export.js'
import { fromOpenApi, type OpenApiImport } from '../collections-io/openapi-import.js'
import { openApiImportRequest } from '../collections-io/openapi-import-request.js'
import { getCollection, insertCollection, listCollections } from '../store/collections.js'
import { withCorsDefaults } from '../gateway/responses/cors.js'
import { insertProxyRow, listProxiesOf, type ProxyInput } from '../store/proxies.js'
import { routeKey } from '../store/route-key.js'
import { bumpConfigVersion } from '../store/rows.js'
import type { Store } from '../store/types.js'
import type { RequestContext, Router } from './router.js'
import { ajv } from '../validation/ajv.js'
import type { ManagementDeps } from './server.js'
import { mergeUpstream } from '../../common/upstream-settings.js'
import { missingUpstream, upstreamProblems } from './upstream-fields.js'
import { basePathProblem, checkCollectionFields, checkProxyPaths, etag, upstreamProblem } from './validation.js'
import { checkDefinition, defaultDefinition } from '../workflows/definition.js'

const MiB = 1024 * 1024

/** What an export holds for this reader: a viewer's leaves drafts out (they see published proxies only). */
function forReader<T extends { proxies: Proxy[] }> (items: T[], user: User | null): T[] {
  return seesPublishedOnly(user) ? items.map(i => ({ ...i, proxies: i.proxies.filter(p => p.status === 'published') })) : items
}

export function registerImportExportRoutes (router: Router, deps: ManagementDeps): void {
  const { store, events } = deps

  // Before '/api/v1/collections/:id' (registered by the collection routes), which would take 'export' for an id.
  router.add('GET', '/api/v1/collections/export', async ctx => {
    const items = forReader(await exportItems(store, idsParam(ctx.query.get('ids'))), ctx.user)
    return fileReply(exportCollections(items), `gatehouse-collections-${new Date().toISOString().slice(0, 10)}`)
  })

  router.add('GET', '/api/v1/collections/:id/export', async ctx => {
    const items = forReader(await exportItems(store, [ctx.params.id]), ctx.user)
    return fileReply(exportCollections(items), items[0].collection.name)
  })

  router.add('GET', '/api/v1/collections/:id/openapi', async ctx => {
    const version = ctx.query.get('version') ?? '3.1'
    if (version !== '3.0' && version !== '3.1') throw invalidParam('version', "must be '3.0' or '3.1'")
    const serverUrl = ctx.query.get('server_url') ?? undefined
    if (serverUrl !== undefined && upstreamProblem(serverUrl) !== null) throw invalidParam('server_url', 'must be an absolute http:// or https:// URL')
    const collection = await getCollection(store, ctx.params.id)
    const doc = toOpenApi(collection, await listProxiesOf(store, collection.id),
      { version, serverUrl, includeDrafts: boolParam(ctx.query, 'include_drafts') && !seesPublishedOnly(ctx.user) })
    return { status: 200, body: doc }
  })

  router.add('POST', '/api/v1/collections/import', async ctx => {
    const keepStatus = boolParam(ctx.query, 'keep_status')
    const parsed = parseImportFile(uploadedFile(ctx))
    if (!parsed.ok) throw parsed.error
    checkImportFile(parsed.file)
    const created = await store.tx(async q => {
      const out: Array<Collection & { proxy_count: number }> = []
      for (const { collection, proxies } of parsed.file.collections) {
        const c = await insertCollection(q, { ...collection, cors: collection.cors == null ? null : withCorsDefaults(collection.cors), upstream: mergeUpstream(null, collection.upstream, collection.upstream_url) })
        for (const p of proxies) {
          await insertProxyRow(q, { ...p, collection_id: c.id, status: keepStatus ? p.status : 'draft', workflow: workflowOf(p) })
        }
        out.push({ ...c, proxy_count: proxies.length })
        await bumpConfigVersion(q, 'collection', c.id)
      }
      return out
    })
    for (const c of created) events.publish({ resource_kind: 'collection', collection_id: c.id, operation: 'imported', actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return { status: 201, body: { items: created } }
  }, { role: 'editor', raw: true, maxBodyBytes: MAX_IMPORT_FILE_BYTES + MiB })

  router.add('POST', '/api/v1/collections/import/openapi', async ctx => {
    const query: Record<string, string | undefined> = {}
    for (const k of ['name', 'base_path', 'upstream_url']) query[k] = ctx.query.get(k) ?? undefined
    const { document, options } = openApiImportRequest(openApiBody(ctx), query)
    const imported = fromOpenApi(document, { ...options, maxBytes: deps.config.OPENAPI_IMPORT_MAX_BYTES, maxOperations: deps.config.OPENAPI_IMPORT_MAX_OPERATIONS })
    checkCollectionFields(imported.collection)
    const { proxies, warnings } = usableProxies(imported)
    const collection = await store.tx(async q => {
      const c = await insertCollection(q, { ...imported.collection, upstream: mergeUpstream(null, undefined, imported.collection.upstream_url) })
      for (const p of proxies) await insertProxyRow(q, { ...p, collection_id: c.id })
      await bumpConfigVersion(q, 'collection', c.id)
      return c
    })
    events.publish({ resource_kind: 'collection', collection_id: collection.id, operation: 'openapi_imported', actor_sub: ctx.user?.sub })
    deps.onConfigChange()
    return { status: 201, body: { ...collection, proxy_count: proxies.length, warnings }, headers: etag(collection.version) }
    // A document wrapped as JSON text in {"document": "..."} may take up to twice its size.
  }, { role: 'editor', raw: true, maxBodyBytes: 2 * deps.config.OPENAPI_IMPORT_MAX_BYTES })
}

const invalidParam = (field: string, message: string) => validationFailed(`${field} ${message}.`, [{ field, message }])

function boolParam (query: URLSearchParams, name: string): boolean {
  const v = query.get(name)
  if (v === null || v === 'false') return false
  if (v === 'true' || v === '') return true
  throw invalidParam(name, "must be 'true' or 'false'")
}

function idsParam (raw: string | null): string[] | undefined {
  if (raw === null) return undefined
  const ids = [...new Set(raw.split(',').map(s => s.trim()).filter(s => s !== ''))]
  if (ids.length === 0) throw invalidParam('ids', 'must list at least one collection id (or leave it out to export all)')
  if (ids.length > IMPORT_LIMITS.collections) throw invalidParam('ids', `may list at most ${IMPORT_LIMITS.collections} collections (a file holds at most that many)`)
  return ids
}

/** The collections (all when `ids` is undefined) with their proxies; 404 names a missing id. */
async function exportItems (store: Store, ids: string[] | undefined) {
  let collections: Collection[]
  if (ids === undefined) {
    const page = await listCollections(store, { limit: IMPORT_LIMITS.collections })
    if (page.next_cursor !== null) {
      throw invalidParam('ids', `is required: there are more than ${IMPORT_LIMITS.collections} collections and a file holds at most that many`)
    }
    collections = page.items
  } else {
    collections = []
    for (const id of ids) collections.push(await getCollection(store, id))
  }
  const items = []
  for (const collection of collections) items.push({ collection, proxies: await listProxiesOf(store, collection.id) })
  return items
}

function fileReply (file: ExportFile, name: string) {
  const ascii = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'collection'
  return {
    status: 200,
    body: file,
    headers: { 'content-disposition': `attachment; filename="${ascii}.gatehouse.json"; filename*=UTF-8''${encodeURIComponent(`${name}.gatehouse.json`)}` }
  }
}

/** The file of an import: the `file` part of a multipart upload, or the JSON body itself. */
function uploadedFile (ctx: RequestContext): Buffer {
  const raw = ctx.rawBody ?? Buffer.alloc(0)
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (raw.length === 0) throw badRequest('The request has no body; upload the collection file as multipart/form-data in a part named "file".')
  if (type === 'multipart/form-data') {
    const parts = parseMultipart(raw, ctx.req.headers['content-type'] ?? '', { maxPartBytes: MAX_IMPORT_FILE_BYTES })
    // The part named "file"; else the one file a form carries, whatever its field is called.
    const files = parts.filter(p => p.filename !== undefined)
    return (parts.some(p => p.name === 'file') || files.length !== 1 ? requirePart(parts, 'file') : files[0]!).data
  }
  if (type === 'application/json' || type.endsWith('+json')) return raw
  throw unsupportedMediaType('Upload the collection file as multipart/form-data in a part named "file", or send it as application/json.')
}

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'application/vnd.oai.openapi', 'text/plain'])

/** JSON bodies are parsed here; YAML (or text that may be either) goes on as text to the importer. */
function openApiBody (ctx: RequestContext): unknown {
  const raw = ctx.rawBody ?? Buffer.alloc(0)
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  if (raw.length === 0) throw badRequest('The request has no body; send the OpenAPI document as application/json or application/yaml.')
  if (YAML_TYPES.has(type)) return raw
  if (type !== 'application/json' && !type.endsWith('+json')) throw unsupportedMediaType('Send the OpenAPI document as application/json or application/yaml.')
  try {
    return JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, ''))
  } catch (err) {
    throw invalidJson(`The request body is not valid JSON: ${(err as Error).message}.`)
  }
}

const workflowOf = (p: ExportFile['collections'][number]['proxies'][number]) =>
  p.workflow ?? (p.workflow_enabled ? defaultDefinition() : null)

/** The checks a proxy or collection create would make, for every record of the file at once. */
function checkImportFile (file: ExportFile): void {
  const details: ErrorDetail[] = []
  const add = (field: string, message: string) => details.push({ field, message })
  file.collections.forEach(({ collection, proxies }, ci) => {
    const at = `collections[${ci}]`
    const bp = basePathProblem(collection.base_path)
    if (bp !== null) add(`${at}.collection.base_path`, bp)
    for (const d of [...missingUpstream(collection), ...upstreamProblems(collection)]) add(`${at}.collection.${d.field}`, d.message)
    if (collection.upstream_url !== undefined) {
      const up = upstreamProblem(collection.upstream_url)
      if (up !== null) add(`${at}.collection.upstream_url`, up)
    }
    proxies.forEach((p, pi) => {
      const here = `${at}.proxies[${pi}]`
      try { checkProxyPaths(p.path, p.target_path) } catch (err) {
        for (const d of (err as AppError).details as ErrorDetail[]) add(`${here}.${d.field ?? 'path'}`, d.message)
      }
      for (const f of ['request_schema', 'response_schema'] as const) {
        if (p[f] === null) continue
        try { ajv.compile(p[f]) } catch (err) { add(`${here}.${f}`, `is not a valid JSON Schema: ${(err as Error).message}`) }
      }
      const wf = workflowOf(p)
      if (wf !== null) for (const pr of checkDefinition(wf, { enabled: p.workflow_enabled })) add(`${here}.workflow${pr.field === null ? '' : `.${pr.field}`}`, pr.message)
    })
  })
  if (details.length > 0) throw validationFailed('The collection file is not valid; see details.', details.slice(0, 50))
}

type ImportedProxy = Omit<ProxyInput, 'collection_id'>

/** Proxies the gateway can serve; the others are left out with a warning instead of failing the import. */
function usableProxies (imported: OpenApiImport): { proxies: ImportedProxy[], warnings: string[] } {
  const warnings = [...imported.warnings]
  const taken = new Map<string, string>()
  // fromOpenApi fills name, methods, path and target_path of every proxy
  const proxies = (imported.proxies as ImportedProxy[]).filter(p => {
    const where = `${p.methods.join(', ')} ${p.path}`
    try { checkProxyPaths(p.path, p.target_path) } catch (err) {
      warnings.push(`${where}: ${(err as AppError).message} The operation was not imported.`)
      return false
    }
    for (const m of p.methods) {
      const other = taken.get(`${m} ${routeKey(p.path)}`)
      if (other !== undefined) {
        warnings.push(`${where}: the gateway cannot tell it from '${other}' (same method, same path shape); it was not imported.`)
        return false
      }
    }
    for (const m of p.methods) taken.set(`${m} ${routeKey(p.path)}`, p.name)
    return true
  })
  return { proxies, warnings }
}
