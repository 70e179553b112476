/**
 * The two body shapes `POST /api/v1/collections/import/openapi` accepts:
 *   - the OpenAPI document itself, options in the query string (`?upstream_url=…`);
 *   - `{"document": <document or its JSON text>, "name"?, "base_path"?, "upstream_url"?}`.
 */
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { OpenApiImportOptions } from './openapi-import.js'
import { isObject } from './schema-walk.js'

const OPTION_KEYS = ['name', 'base_path', 'upstream_url'] as const

/** Splits a request into the document and the import options; throws 400 on a bad option. */
export function openApiImportRequest (body: unknown, query: Record<string, string | undefined> = {}):
{ document: unknown, options: OpenApiImportOptions } {
  const wrapped = isObject(body) && 'document' in body && body.openapi === undefined
  const source: Record<string, unknown> = wrapped ? body : query
  const details: ErrorDetail[] = []
  const options: OpenApiImportOptions = {}
  for (const key of OPTION_KEYS) {
    const value = source[key]
    if (value === undefined) continue
    if (typeof value !== 'string' || value.trim() === '') details.push({ field: key, message: 'must be a non-empty string' })
    else options[key] = value.trim()
  }
  if (wrapped) {
    for (const key of Object.keys(body)) {
      if (key !== 'document' && !(OPTION_KEYS as readonly string[]).includes(key)) details.push({ field: key, message: 'is not a known field' })
    }
  }
  if (details.length > 0) throw validationFailed('The import options are not valid; see details.', details)
  return { document: wrapped ? body.document : body, options }
}
