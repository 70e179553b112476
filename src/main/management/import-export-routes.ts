/**
 * Collection files and OpenAPI documents in and out (operations in
 * src/main/operations/import-export.ts):
 *
 *   GET  /collections/:id/export        one collection as a gatehouse.collection file
 *   GET  /collections/export?ids=a,b    several (all when no ids) in one file
 *   GET  /collections/:id/openapi       OpenAPI 3.0/3.1 of its (published) proxies
 *   POST /collections/import            a file (multipart part `file`, or JSON) -> collections
 *   POST /collections/import/openapi    an OpenAPI document -> one collection of draft proxies
 *
 * Every route is a table row. The exports answer a file (a `reply` with Content-Disposition) and
 * the imports read a raw upload (`raw` rows): the row's input decodes the HTTP body and hands
 * the operation the file or document as plain input.
 */
import { badRequest, invalidJson, unsupportedMediaType } from '../../common/errors.js'
import type { ExportFile } from '../collections-io/export-file.js'
import { IMPORT_LIMITS } from '../collections-io/export-file-schema.js'
import { MAX_IMPORT_FILE_BYTES } from '../collections-io/import-file.js'
import { parseMultipart, requirePart } from '../collections-io/multipart.js'
import * as io from '../operations/import-export.js'
import type { OperationDeps } from '../operations/types.js'
import { op, type OperationRoute } from './operation-routes.js'
import type { Reply } from './router.js'
import { etag, upstreamProblem } from './validation.js'

const MiB = 1024 * 1024
const { invalidParam } = io

/** The operations' dependencies plus the OpenAPI import's limits (OPENAPI_IMPORT_MAX_BYTES, _MAX_OPERATIONS). */
export type ImportExportDeps = OperationDeps & { openApiLimits: io.OpenApiLimits }

/** The rows; the OpenAPI upload's size bound follows OPENAPI_IMPORT_MAX_BYTES. */
export function importExportRoutes (openApiMaxBytes: number): ReadonlyArray<OperationRoute<ImportExportDeps>> {
  return [
    op({
      method: 'GET',
      path: '/api/v1/collections/export',
      input: r => ({ ids: idsParam(r.query.get('ids')) }),
      operation: io.exportCollectionsOp,
      reply: fileReply
    }),
    op({ method: 'GET', path: '/api/v1/collections/:id/export', input: r => ({ id: r.params.id }), operation: io.exportCollectionOp, reply: fileReply }),
    op({
      method: 'GET',
      path: '/api/v1/collections/:id/openapi',
      input: r => {
        const version = openApiVersion(r.query)
        const serverUrl = r.query.get('server_url') ?? undefined
        if (serverUrl !== undefined && upstreamProblem(serverUrl) !== null) throw invalidParam('server_url', 'must be an absolute http:// or https:// URL')
        return { id: r.params.id, version, serverUrl, includeDrafts: boolParam(r.query, 'include_drafts') }
      },
      operation: io.collectionOpenApiOp
    }),
    op({
      method: 'POST',
      path: '/api/v1/collections/import',
      role: 'editor',
      options: { raw: true, maxBodyBytes: MAX_IMPORT_FILE_BYTES + MiB },
      status: 201,
      input: r => ({ keepStatus: boolParam(r.query, 'keep_status'), file: uploadedFile(r.raw, r.contentType) }),
      operation: io.importCollectionsOp
    }),
    op({
      method: 'POST',
      path: '/api/v1/collections/import/openapi',
      role: 'editor',
      // A document wrapped as JSON text in {"document": "..."} may take up to twice its size.
      options: { raw: true, maxBodyBytes: 2 * openApiMaxBytes },
      status: 201,
      etag: true,
      input: r => {
        const query: Record<string, string | undefined> = {}
        for (const k of ['name', 'base_path', 'upstream_url']) query[k] = r.query.get(k) ?? undefined
        return { body: openApiBody(r.raw, r.contentType), query }
      },
      operation: io.importOpenApiOp
    })
  ]
}

function openApiVersion (query: URLSearchParams): '3.0' | '3.1' {
  const version = query.get('version') ?? '3.1'
  if (version !== '3.0' && version !== '3.1') throw invalidParam('version', "must be '3.0' or '3.1'")
  return version
}

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

function fileReply ({ file, name }: { file: ExportFile, name: string }): Reply {
  const ascii = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'collection'
  return {
    status: 200,
    body: file,
    headers: { 'content-disposition': `attachment; filename="${ascii}.gatehouse.json"; filename*=UTF-8''${encodeURIComponent(`${name}.gatehouse.json`)}` }
  }
}

/** A Content-Type's media type, lower case, without parameters. */
const mediaType = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase() // split always yields one element

/** The file of an import: the `file` part of a multipart upload, or the JSON body itself. */
function uploadedFile (body: Buffer | null, contentType: string): Buffer {
  const raw = body ?? Buffer.alloc(0)
  const type = mediaType(contentType)
  if (raw.length === 0) throw badRequest('The request has no body; upload the collection file as multipart/form-data in a part named "file".')
  if (type === 'multipart/form-data') {
    const parts = parseMultipart(raw, contentType, { maxPartBytes: MAX_IMPORT_FILE_BYTES })
    // The part named "file"; else the one file a form carries, whatever its field is called.
    const files = parts.filter(p => p.filename !== undefined)
    return (parts.some(p => p.name === 'file') || files.length !== 1 ? requirePart(parts, 'file') : files[0]!).data
  }
  if (type === 'application/json' || type.endsWith('+json')) return raw
  throw unsupportedMediaType('Upload the collection file as multipart/form-data in a part named "file", or send it as application/json.')
}

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'application/vnd.oai.openapi', 'text/plain'])

/** JSON bodies are parsed here; YAML (or text that may be either) goes on as text to the importer. */
function openApiBody (body: Buffer | null, contentType: string): unknown {
  const raw = body ?? Buffer.alloc(0)
  const type = mediaType(contentType)
  if (raw.length === 0) throw badRequest('The request has no body; send the OpenAPI document as application/json or application/yaml.')
  if (YAML_TYPES.has(type)) return raw
  if (type !== 'application/json' && !type.endsWith('+json')) throw unsupportedMediaType('Send the OpenAPI document as application/json or application/yaml.')
  try {
    return JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, ''))
  } catch (err) {
    throw invalidJson(`The request body is not valid JSON: ${(err as Error).message}.`)
  }
}
