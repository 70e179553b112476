/**
 * A schema-aware walker shared by the OpenAPI import and export: it visits only the
 * positions that hold sub-schemas, so values of `enum`, `const`, `default` or
 * `examples` are never mistaken for schemas (a `$ref` key inside an example stays data).
 */

export type JsonObject = Record<string, unknown>

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const ONE = new Set(['items', 'not', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames',
  'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'])
const MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])

/**
 * Copies `schema` one level deep, replacing every direct sub-schema with `fn(sub)`.
 * Keys named `__proto__` are dropped: assigning them would change the copy's prototype.
 */
export function mapSubschemas (schema: JsonObject, fn: (sub: unknown) => unknown): JsonObject {
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '__proto__') continue
    if (ONE.has(key)) {
      // draft-07 tuple form of `items` is a list of schemas
      out[key] = Array.isArray(value) ? value.map(fn) : fn(value)
    } else if (MAP.has(key) && isObject(value)) {
      const m: JsonObject = {}
      for (const [name, sub] of Object.entries(value)) if (name !== '__proto__') m[name] = fn(sub)
      out[key] = m
    } else if (LIST.has(key) && Array.isArray(value)) {
      out[key] = value.map(fn)
    } else {
      out[key] = value
    }
  }
  return out
}

/** Applies `fn` to every schema node bottom-up (children first), to a bounded depth. */
export function transformSchema (schema: unknown, fn: (node: JsonObject) => JsonObject, maxDepth = 100): unknown {
  const visit = (node: unknown, depth: number): unknown => {
    if (!isObject(node) || depth > maxDepth) return node
    return fn(mapSubschemas(node, sub => visit(sub, depth + 1)))
  }
  return visit(schema, 0)
}
