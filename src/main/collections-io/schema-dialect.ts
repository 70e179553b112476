/**
 * Conversions between the schema dialects involved in OpenAPI import and export.
 * Proxies store JSON Schema 2020-12 (what OpenAPI 3.1 uses as is); OpenAPI 3.0 has its own
 * subset with `nullable`, boolean `exclusiveMinimum` and a single `example`.
 */
import { transformSchema, type JsonObject } from './schema-walk.js'

// OpenAPI annotations that are not JSON Schema: a strict validator would refuse them
const OPENAPI_ONLY = new Set(['xml', 'discriminator', 'externalDocs', 'nullable', 'example'])

/** Turns an OpenAPI 3.0 or 3.1 schema (refs already resolved) into plain JSON Schema 2020-12. */
export function toJsonSchema (schema: unknown, from: '3.0' | '3.1'): unknown {
  return transformSchema(schema, node => {
    const out: JsonObject = {}
    for (const [k, v] of Object.entries(node)) {
      if (!OPENAPI_ONLY.has(k) && !k.startsWith('x-')) out[k] = v
    }
    if ('example' in node && !('examples' in node)) out.examples = [node.example]
    if (from === '3.0') {
      if (node.nullable === true) addNull(out)
      for (const [bound, excl] of [['minimum', 'exclusiveMinimum'], ['maximum', 'exclusiveMaximum']] as const) {
        if (node[excl] === true && typeof node[bound] === 'number') {
          out[excl] = node[bound]
          delete out[bound]
        } else if (typeof node[excl] === 'boolean') {
          delete out[excl]
        }
      }
    }
    return out
  })
}

function addNull (out: JsonObject): void {
  if (typeof out.type === 'string') out.type = [out.type, 'null']
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null']
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
}

// 2020-12 keywords OpenAPI 3.0 has no equivalent for: dropped from the document
const NOT_IN_30 = new Set(['$schema', '$id', '$anchor', '$dynamicAnchor', '$dynamicRef', '$comment', '$defs',
  'definitions', 'const', 'examples', 'prefixItems', 'contains', 'minContains', 'maxContains', 'propertyNames',
  'if', 'then', 'else', 'dependentSchemas', 'dependentRequired', 'unevaluatedItems', 'unevaluatedProperties',
  'contentEncoding', 'contentMediaType', 'contentSchema'])

/** Turns a JSON Schema 2020-12 schema into an OpenAPI 3.0 schema object, where feasible. */
export function toOas30Schema (schema: unknown): unknown {
  return transformSchema(schema, node => {
    const out: JsonObject = {}
    for (const [k, v] of Object.entries(node)) if (!NOT_IN_30.has(k)) out[k] = v
    if ('const' in node && !('enum' in node)) out.enum = [node.const]
    if (Array.isArray(node.examples) && node.examples.length > 0 && !('example' in node)) out.example = node.examples[0]
    for (const [bound, excl] of [['minimum', 'exclusiveMinimum'], ['maximum', 'exclusiveMaximum']] as const) {
      if (typeof node[excl] === 'number') {
        out[bound] = node[excl]
        out[excl] = true
      }
    }
    // a tuple has no 3.0 form: accept any of its item schemas
    if (Array.isArray(node.prefixItems) && !('items' in node)) out.items = { anyOf: node.prefixItems }
    if (Array.isArray(node.items)) out.items = { anyOf: node.items }
    if (Array.isArray(node.type)) typeListTo30(node.type as unknown[], out)
    else if (node.type === 'null') typeListTo30(['null'], out)
    return out
  })
}

function typeListTo30 (types: unknown[], out: JsonObject): void {
  const nonNull = types.filter(t => t !== 'null')
  delete out.type
  if (types.includes('null')) out.nullable = true
  if (nonNull.length === 1) {
    out.type = nonNull[0]
  } else if (nonNull.length > 1) {
    const alternatives = nonNull.map(t => ({ type: t }))
    if (Array.isArray(out.anyOf)) out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: alternatives }]
    else out.anyOf = alternatives
  } else if (out.nullable === true && !('enum' in out)) {
    out.enum = [null]
  }
}

