/**
 * Reads an OpenAPI document given as JSON text or as a parsed object, bounds its size and
 * checks the basics (version, info, paths) before anything is mapped. YAML is refused with a
 * message saying to send JSON: parsing it would need a dependency the service does not carry.
 */
import { invalidJson, payloadTooLarge, unsupportedMediaType, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { isObject, type JsonObject } from './schema-walk.js'

export const MAX_OPENAPI_BYTES = 10 * 1024 * 1024

export interface OpenApiDocument {
  doc: JsonObject
  /** The dialect family: it decides how schemas convert to JSON Schema 2020-12. */
  version: '3.0' | '3.1'
}

const YAML_START = /^(---|%YAML|#)|^["']?(openapi|swagger|info|paths|servers|components)["']?\s*:/m

/** Parses and checks a document; throws 400/413/415 AppErrors with `{field, message}` details. */
export function readOpenApiDocument (input: unknown, opts: { name?: string } = {}): OpenApiDocument {
  const doc = parseInput(input)
  const details: ErrorDetail[] = []
  if (!isObject(doc)) {
    throw validationFailed('The OpenAPI document must be a JSON object.', [{ field: '', message: 'must be an object' }])
  }
  if (doc.swagger !== undefined) {
    throw validationFailed('Swagger 2.0 documents are not supported; convert the document to OpenAPI 3.0 or 3.1 and import it again.',
      [{ field: 'swagger', message: `version ${JSON.stringify(doc.swagger)} is not supported; 'openapi' 3.0.x or 3.1.x is required` }])
  }
  let version: '3.0' | '3.1' = '3.0'
  if (typeof doc.openapi !== 'string') {
    details.push({ field: 'openapi', message: "is required: the OpenAPI version, '3.0.x' or '3.1.x'" })
  } else if (/^3\.[01]\.\d+(-[\w.]+)?$/.test(doc.openapi)) {
    version = doc.openapi.startsWith('3.1') ? '3.1' : '3.0'
  } else {
    details.push({ field: 'openapi', message: `version '${doc.openapi}' is not supported; use 3.0.x or 3.1.x` })
  }
  if (!isObject(doc.info)) {
    details.push({ field: 'info', message: 'is required: an object with at least a title' })
  } else if (opts.name === undefined && (typeof doc.info.title !== 'string' || doc.info.title.trim() === '')) {
    details.push({ field: 'info.title', message: 'is required (or give the collection a name)' })
  }
  if (!isObject(doc.paths)) {
    details.push({ field: 'paths', message: 'is required: an object mapping paths to operations' })
  }
  if (doc.servers !== undefined && !Array.isArray(doc.servers)) {
    details.push({ field: 'servers', message: 'must be an array' })
  }
  if (details.length > 0) {
    throw validationFailed(`The OpenAPI document is not valid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  }
  return { doc, version }
}

function parseInput (input: unknown): unknown {
  if (Buffer.isBuffer(input)) input = input.toString('utf8')
  if (typeof input === 'string') {
    if (Buffer.byteLength(input) > MAX_OPENAPI_BYTES) throw tooLarge()
    const text = input.replace(/^\uFEFF/, '').trim()
    if (!text.startsWith('{')) {
      if (YAML_START.test(text)) {
        throw unsupportedMediaType('The OpenAPI document looks like YAML; send it as JSON (convert it first, for example with `yq -o=json`).')
      }
      throw invalidJson('The OpenAPI document is not valid JSON: it must be a JSON object.')
    }
    try {
      return JSON.parse(text)
    } catch (err) {
      throw invalidJson(`The OpenAPI document is not valid JSON: ${(err as Error).message}.`)
    }
  }
  // an already parsed body was bounded by the request limit; a caller's object is measured here
  let size = 0
  try { size = JSON.stringify(input)?.length ?? 0 } catch {
    throw validationFailed('The OpenAPI document must be plain JSON data.', [{ field: '', message: 'is not serialisable as JSON' }])
  }
  if (size > MAX_OPENAPI_BYTES) throw tooLarge()
  return input
}

const tooLarge = () => payloadTooLarge(`The OpenAPI document is larger than ${MAX_OPENAPI_BYTES / 1024 / 1024} MiB; split it into smaller documents.`)
