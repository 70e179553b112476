/**
 * Resolves the local `$ref`s of an OpenAPI document into self-contained schemas:
 *
 *   {$ref: '#/components/schemas/Pet'}   ──inline──▶  {type: 'object', properties: …}
 *   {$ref: '#/components/schemas/Node'}  ──────────▶  {$ref: '#/$defs/Node'} + root $defs.Node
 *     (Node can reach itself through its refs: a recursive schema cannot be inlined)
 *
 * Bounded three ways: nesting depth, a node budget for the whole document (a few refs used
 * many times expand exponentially), and references to other files are never fetched.
 */
import { validationFailed } from '../../common/errors.js'
import { isObject, mapSubschemas, type JsonObject } from './schema-walk.js'

export const MAX_SCHEMA_DEPTH = 64
export const MAX_EXPANDED_NODES = 200_000
const MAX_REF_HOPS = 16
const MAX_WARNINGS = 200

export interface DerefContext {
  doc: JsonObject
  warnings: string[]
  /** Schema nodes still allowed to be produced for the whole document. */
  budget: number
  /** Memo: whether a ref can reach itself through the refs of its target. */
  recursive: Map<string, boolean>
}

export function createDerefContext (doc: JsonObject, warnings: string[], budget = MAX_EXPANDED_NODES): DerefContext {
  return { doc, warnings, budget, recursive: new Map() }
}

/** Adds a warning once; past a bound, further ones are summarised by a single line. */
export function warn (ctx: { warnings: string[] }, message: string): void {
  if (ctx.warnings.includes(message)) return
  if (ctx.warnings.length < MAX_WARNINGS) ctx.warnings.push(message)
  else if (ctx.warnings.length === MAX_WARNINGS) ctx.warnings.push('Further warnings were left out.')
}

/** The value a local JSON pointer (`#/a/b~1c`) designates, or undefined. */
export function resolvePointer (doc: unknown, ref: string): unknown {
  if (ref === '#') return doc
  if (!ref.startsWith('#/')) return undefined
  let cur = doc
  for (const raw of ref.slice(2).split('/')) {
    let seg: string
    try { seg = decodeURIComponent(raw) } catch { return undefined }
    seg = seg.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(cur) && /^\d+$/.test(seg)) cur = cur[Number(seg)]
    else if (isObject(cur) && Object.hasOwn(cur, seg)) cur = cur[seg]
    else return undefined
  }
  return cur
}

/** Follows `$ref` hops of a non-schema object (parameter, request body, response, path item). */
export function derefObject (ctx: DerefContext, value: unknown, where: string): JsonObject | undefined {
  let cur = value
  const seen = new Set<string>()
  for (let hop = 0; isObject(cur) && typeof cur.$ref === 'string'; hop++) {
    const ref = cur.$ref
    let problem: string | undefined
    if (!ref.startsWith('#')) problem = `the external reference ${ref} is not followed`
    else if (seen.has(ref) || hop >= MAX_REF_HOPS) problem = `the reference ${ref} loops`
    else {
      seen.add(ref)
      cur = resolvePointer(ctx.doc, ref)
      if (cur === undefined) problem = `the reference ${ref} does not resolve`
    }
    if (problem !== undefined) {
      warn(ctx, `${where}: ${problem}; it was skipped.`)
      return undefined
    }
  }
  return isObject(cur) ? cur : undefined
}

/** A copy of `schema` with every local `$ref` inlined (cycles kept as `$defs`); undefined for a non-object. */
export function derefSchema (ctx: DerefContext, schema: unknown, where: string): JsonObject | undefined {
  if (!isObject(schema)) return undefined
  const defNames = new Map<string, string>()

  const defName = (ref: string): string => {
    let name = defNames.get(ref)
    if (name !== undefined) return name
    const base = (ref.split('/').pop() ?? 'def').replace(/[^A-Za-z0-9_.-]/g, '_') || 'def'
    const taken = new Set(defNames.values())
    name = base
    for (let i = 2; taken.has(name); i++) name = `${base}_${i}`
    defNames.set(ref, name)
    return name
  }

  const expand = (node: unknown, stack: readonly string[], depth: number): unknown => {
    if (--ctx.budget < 0) throw tooLarge()
    if (!isObject(node)) return node
    if (depth > MAX_SCHEMA_DEPTH) {
      warn(ctx, `${where}: the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels; deeper parts accept any value.`)
      return {}
    }
    if (typeof node.$ref !== 'string') return mapSubschemas(node, sub => expand(sub, stack, depth + 1))
    const ref = node.$ref
    const { $ref: _ref, ...siblings } = node
    const rest = Object.keys(siblings).length > 0 ? expand(siblings, stack, depth + 1) as JsonObject : {}
    if (!ref.startsWith('#')) {
      warn(ctx, `${where}: the external reference ${ref} is not followed; that part accepts any value.`)
      return rest
    }
    if (stack.includes(ref) || isRecursive(ctx, ref)) return { ...rest, $ref: `#/$defs/${defName(ref)}` }
    const target = resolvePointer(ctx.doc, ref)
    if (!isObject(target)) {
      warn(ctx, `${where}: the reference ${ref} does not resolve; that part accepts any value.`)
      return rest
    }
    return { ...expand(target, [...stack, ref], depth + 1) as JsonObject, ...rest }
  }

  const root = expand(schema, [], 0) as JsonObject
  // each recursive schema is expanded once as a definition; it may refer to further ones
  const defs: JsonObject = {}
  const done = new Set<string>()
  for (let next = firstPending(defNames, done); next !== undefined; next = firstPending(defNames, done)) {
    done.add(next)
    defs[defName(next)] = expand(resolvePointer(ctx.doc, next), [next], 1)
  }
  if (done.size > 0) root.$defs = { ...(isObject(root.$defs) ? root.$defs : {}), ...defs }
  return root
}

/** True when the target of `ref` leads back to `ref` through local references. */
function isRecursive (ctx: DerefContext, ref: string): boolean {
  let known = ctx.recursive.get(ref)
  if (known !== undefined) return known
  const seen = new Set<string>()
  const queue = refsIn(resolvePointer(ctx.doc, ref))
  known = false
  // bounded: each distinct ref of the document is visited at most once
  while (queue.length > 0 && !known) {
    const next = queue.pop() as string
    if (next === ref) known = true
    else if (!seen.has(next)) {
      seen.add(next)
      queue.push(...refsIn(resolvePointer(ctx.doc, next)))
    }
  }
  ctx.recursive.set(ref, known)
  return known
}

/** Local `$ref` strings anywhere inside a value, to a bounded depth. */
function refsIn (value: unknown, depth = 0, out: string[] = []): string[] {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== 'object' || value === null) return out
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/')) out.push(v)
    else refsIn(v, depth + 1, out)
  }
  return out
}

const firstPending = (names: Map<string, string>, done: Set<string>): string | undefined => {
  for (const ref of names.keys()) if (!done.has(ref)) return ref
  return undefined
}

const tooLarge = () => validationFailed(
  `The OpenAPI document's schemas expand to more than ${MAX_EXPANDED_NODES} nodes once references are resolved; split the document or simplify its schemas.`,
  [{ field: 'components', message: `expands to more than ${MAX_EXPANDED_NODES} schema nodes` }])
