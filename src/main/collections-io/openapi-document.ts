/**
 * Reads an OpenAPI document given as JSON or YAML text or as a parsed object, bounds its size
 * and checks the basics (version, info, paths) before anything is mapped. YAML is parsed by the
 * `yaml` package with a bound on alias expansion; a Swagger 2.0 document is upgraded to OpenAPI
 * 3.1 by `@scalar/openapi-upgrader` first, with a warning saying so.
 */
import { upgrade } from '@scalar/openapi-upgrader'
import { parse as parseYaml, YAMLParseError } from 'yaml'
import { AppError, badRequest, invalidJson, payloadTooLarge, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { isObject, type JsonObject } from './schema-walk.js'

/** Defaults of OPENAPI_IMPORT_MAX_BYTES and OPENAPI_IMPORT_MAX_OPERATIONS. */
export const OPENAPI_LIMITS = { maxBytes: 64 * 1024 * 1024, maxOperations: 5000 }
/** Aliases a YAML document may expand (a "billion laughs" document is refused, not expanded). */
const MAX_YAML_ALIASES = 1000

export interface OpenApiDocument {
  doc: JsonObject
  /** The dialect family: it decides how schemas convert to JSON Schema 2020-12. */
  version: '3.0' | '3.1'
  /** What reading changed (a Swagger 2.0 upgrade). */
  warnings: string[]
}

/** Parses and checks a document; throws 400/413 AppErrors with `{field, message}` details. */
export function readOpenApiDocument (input: unknown, opts: { name?: string, maxBytes?: number } = {}): OpenApiDocument {
  const maxBytes = opts.maxBytes ?? OPENAPI_LIMITS.maxBytes
  const parsed = parseInput(input, maxBytes)
  const details: ErrorDetail[] = []
  const warnings: string[] = []
  if (!isObject(parsed)) {
    throw validationFailed('The OpenAPI document must be an object (JSON or YAML).', [{ field: '', message: 'must be an object' }])
  }
  let doc: JsonObject = parsed
  if (doc.swagger !== undefined) {
    if (doc.swagger !== '2.0') {
      throw validationFailed(`Swagger ${JSON.stringify(doc.swagger)} is not supported; Swagger 2.0 and OpenAPI 3.0 and 3.1 are.`,
        [{ field: 'swagger', message: `version ${JSON.stringify(doc.swagger)} is not supported; '2.0' is` }])
    }
    doc = upgradeSwagger(doc)
    warnings.push('The document is Swagger 2.0; it was upgraded to OpenAPI 3.1 before import (definitions became components.schemas, body and formData parameters request bodies, host, basePath and schemes the servers, consumes and produces media types).')
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
    // OpenAPI 3.1 allows a document of webhooks or components only: valid, but nothing to serve.
    const only = version === '3.1' && doc.paths === undefined && (isObject(doc.webhooks) || isObject(doc.components))
    details.push({ field: 'paths', message: only
      ? `is missing: this document describes only ${isObject(doc.webhooks) ? 'webhooks (calls the API makes)' : 'components'}, no operations the gateway could serve`
      : 'is required: an object mapping paths to operations' })
  }
  if (doc.servers !== undefined && !Array.isArray(doc.servers)) {
    details.push({ field: 'servers', message: 'must be an array' })
  }
  if (details.length > 0) {
    throw validationFailed(`The OpenAPI document is not valid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  }
  return { doc, version, warnings }
}

function upgradeSwagger (doc: JsonObject): JsonObject {
  try {
    const out = upgrade(structuredClone(doc), '3.1') as unknown
    if (!isObject(out) || typeof out.openapi !== 'string') throw new Error('the converter gave no OpenAPI document')
    return out
  } catch (err) {
    if (err instanceof AppError) throw err
    throw validationFailed(`The Swagger 2.0 document could not be upgraded to OpenAPI 3.1: ${(err as Error).message}.`,
      [{ field: 'swagger', message: `could not be upgraded: ${(err as Error).message}` }])
  }
}

function parseInput (input: unknown, maxBytes: number): unknown {
  if (Buffer.isBuffer(input)) input = input.toString('utf8')
  if (typeof input === 'string') {
    if (Buffer.byteLength(input) > maxBytes) throw tooLarge(maxBytes)
    const text = input.replace(/^\uFEFF/, '').trim()
    if (text.startsWith('{')) {
      try {
        return JSON.parse(text)
      } catch (err) {
        throw invalidJson(`The OpenAPI document is not valid JSON: ${(err as Error).message}.`)
      }
    }
    return parseYamlDocument(text)
  }
  // an already parsed body was bounded by the request limit; a caller's object is measured here
  let size = 0
  try { size = JSON.stringify(input)?.length ?? 0 } catch {
    throw validationFailed('The OpenAPI document must be plain JSON data.', [{ field: '', message: 'is not serialisable as JSON' }])
  }
  if (size > maxBytes) throw tooLarge(maxBytes)
  return input
}

/** YAML text (JSON is YAML too, but came the faster way above); errors say where. */
function parseYamlDocument (text: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, prettyErrors: true, uniqueKeys: true, merge: true })
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const at = err.linePos?.[0]
      const where = at !== undefined ? ` (line ${at.line}, column ${at.col})` : ''
      throw badRequest(`The OpenAPI document is not valid YAML or JSON${where}: ${err.message.split('\n')[0]}`)
    }
    if (err instanceof ReferenceError || /alias/i.test((err as Error).message)) {
      throw badRequest(`The OpenAPI document is refused: ${(err as Error).message} (at most ${MAX_YAML_ALIASES} aliases are expanded).`)
    }
    throw badRequest(`The OpenAPI document is not valid YAML or JSON: ${(err as Error).message}`)
  }
}

const size = (bytes: number): string => bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024 * 10) / 10} MiB` : `${Math.round(bytes / 1024)} KiB`
const tooLarge = (maxBytes: number) => payloadTooLarge(`The OpenAPI document is larger than ${size(maxBytes)} (OPENAPI_IMPORT_MAX_BYTES); raise the setting or split the document.`)
