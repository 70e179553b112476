/**
 * Collection files and OpenAPI documents in and out: export one or several collections as a
 * gatehouse.collection file, a collection's proxies as an OpenAPI document, and the imports of
 * both. The routes (src/main/management/import-export-routes.ts) decode the HTTP body (multipart
 * part, JSON or YAML text) and hand these operations the file or document as plain input.
 *
 * Imports create everything in one transaction: a conflict (409) or an invalid part (400)
 * creates nothing.
 */
import { AppError, validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { Collection, Proxy } from '../../common/types.js'
import { mergeUpstream } from '../../common/upstream-settings.js'
import { exportCollections, type ExportFile } from '../collections-io/export-file.js'
import { IMPORT_LIMITS } from '../collections-io/export-file-schema.js'
import { parseImportFile } from '../collections-io/import-file.js'
import { toOpenApi } from '../collections-io/openapi-export.js'
import { fromOpenApi, type OpenApiImport } from '../collections-io/openapi-import.js'
import { openApiImportRequest } from '../collections-io/openapi-import-request.js'
import { withCorsDefaults } from '../gateway/responses/cors.js'
import { missingUpstream, upstreamProblems } from '../management/upstream-fields.js'
import { basePathProblem, checkCollectionFields, checkProxyPaths, upstreamProblem } from '../management/validation.js'
import { getCollection, insertCollection, listCollections } from '../store/collections.js'
import { insertProxyRow, listProxiesOf, type ProxyInput } from '../store/proxies.js'
import { routeKey } from '../store/route-key.js'
import { bumpConfigVersion } from '../store/rows.js'
import type { Store } from '../store/types.js'
import { ajv } from '../validation/ajv.js'
import { checkDefinition, defaultDefinition } from '../workflows/definition.js'
import { seesPublishedOnly } from './proxies.js'
import type { Caller, OperationDeps, RecordRef } from './types.js'

type Deps = Pick<OperationDeps, 'store' | 'effects'>

/** The size limits of an OpenAPI import (OPENAPI_IMPORT_MAX_BYTES, OPENAPI_IMPORT_MAX_OPERATIONS). */
export interface OpenApiLimits { maxBytes: number, maxOperations: number }

/** A collection file and the name it is saved under (without the `.gatehouse.json` suffix). */
export interface NamedExport { file: ExportFile, name: string }

export const invalidParam = (field: string, message: string): AppError => validationFailed(`${field} ${message}.`, [{ field, message }])

/** Several collections (all when `ids` is undefined) in one file; 404 names a missing id. */
export async function exportCollectionsOp (deps: Pick<Deps, 'store'>, caller: Caller, input: { ids?: string[] }): Promise<NamedExport> {
  const items = forReader(await exportItems(deps.store, input.ids), caller)
  return { file: exportCollections(items), name: `gatehouse-collections-${new Date().toISOString().slice(0, 10)}` }
}

/** One collection as a file named after it. */
export async function exportCollectionOp (deps: Pick<Deps, 'store'>, caller: Caller, input: RecordRef): Promise<NamedExport> {
  const collection = await getCollection(deps.store, input.id)
  const items = forReader([{ collection, proxies: await listProxiesOf(deps.store, collection.id) }], caller)
  return { file: exportCollections(items), name: collection.name }
}

/** OpenAPI 3.0/3.1 of a collection's proxies: its published ones, and its drafts when asked by a caller who sees them. */
export async function collectionOpenApiOp (deps: Pick<Deps, 'store'>, caller: Caller, input: RecordRef & { version: '3.0' | '3.1', serverUrl?: string, includeDrafts: boolean }): Promise<unknown> {
  const collection = await getCollection(deps.store, input.id)
  return toOpenApi(collection, await listProxiesOf(deps.store, collection.id),
    { version: input.version, serverUrl: input.serverUrl, includeDrafts: input.includeDrafts && !seesPublishedOnly(caller) })
}

/** A collection file's bytes -> its collections and proxies (drafts unless `keepStatus`). */
export async function importCollectionsOp (deps: Deps, caller: Caller, input: { file: Buffer, keepStatus: boolean }): Promise<{ items: Array<Collection & { proxy_count: number }> }> {
  const parsed = parseImportFile(input.file)
  if (!parsed.ok) throw parsed.error
  checkImportFile(parsed.file)
  const created = await deps.store.tx(async q => {
    const out: Array<Collection & { proxy_count: number }> = []
    for (const { collection, proxies } of parsed.file.collections) {
      const c = await insertCollection(q, { ...collection, cors: collection.cors == null ? null : withCorsDefaults(collection.cors), upstream: mergeUpstream(null, collection.upstream, collection.upstream_url) })
      for (const p of proxies) {
        await insertProxyRow(q, { ...p, collection_id: c.id, status: input.keepStatus ? p.status : 'draft', workflow: workflowOf(p) })
      }
      out.push({ ...c, proxy_count: proxies.length })
      await bumpConfigVersion(q, 'collection', c.id)
    }
    return out
  })
  deps.effects.changed(caller, ...created.map(c => ({ resource_kind: 'collection' as const, collection_id: c.id, operation: 'imported' as const })))
  return { items: created }
}

/**
 * An OpenAPI document (parsed JSON, or the YAML/JSON text as bytes) -> one collection of draft
 * proxies; `query` names the collection's name, base_path and upstream_url where the document does not.
 */
export async function importOpenApiOp (deps: Deps & { openApiLimits: OpenApiLimits }, caller: Caller, input: { body: unknown, query: Record<string, string | undefined> }): Promise<Collection & { proxy_count: number, warnings: string[] }> {
  const { document, options } = openApiImportRequest(input.body, input.query)
  const imported = fromOpenApi(document, { ...options, maxBytes: deps.openApiLimits.maxBytes, maxOperations: deps.openApiLimits.maxOperations })
  checkCollectionFields(imported.collection)
  const { proxies, warnings } = usableProxies(imported)
  const collection = await deps.store.tx(async q => {
    const c = await insertCollection(q, { ...imported.collection, upstream: mergeUpstream(null, undefined, imported.collection.upstream_url) })
    for (const p of proxies) await insertProxyRow(q, { ...p, collection_id: c.id })
    await bumpConfigVersion(q, 'collection', c.id)
    return c
  })
  deps.effects.changed(caller, { resource_kind: 'collection', collection_id: collection.id, operation: 'openapi_imported' })
  return { ...collection, proxy_count: proxies.length, warnings }
}

/** What an export holds for this reader: a viewer's leaves drafts out (they see published proxies only). */
function forReader<T extends { proxies: Proxy[] }> (items: T[], caller: Caller): T[] {
  return seesPublishedOnly(caller) ? items.map(i => ({ ...i, proxies: i.proxies.filter(p => p.status === 'published') })) : items
}

/** The collections (all when `ids` is undefined) with their proxies; 404 names a missing id. */
async function exportItems (store: Store, ids: string[] | undefined): Promise<Array<{ collection: Collection, proxies: Proxy[] }>> {
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
