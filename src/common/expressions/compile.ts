/**
 * Turns a parsed expression into a closure, once. Property access cannot reach
 * prototypes (`__proto__`, `constructor`, `prototype` are refused) and only the
 * functions listed here can be called: data is never executed.
 */
import { ExpressionError } from './lexer.js'
import { parseExpression, type Node } from './parser.js'

export interface Scope {
  root (name: string): unknown
  has (name: string): boolean
  /** True when `name` is a node's name (a workflow run's scope): `{{<node>.output}}` is then that node's output. */
  isNode? (name: string): boolean
  /** Told of each `{{ }}` expression whose value came out undefined (it referred to nothing). */
  miss? (src: string): void
}
export type Compiled = (scope: Scope) => unknown

/** Whether a bare name is one of the functions (or namespaces of functions) an expression may call. */
export function isFunctionName (name: string): boolean { return own(GLOBAL_FNS, name) || own(NAMESPACE_FNS, name) }

const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k)
/** The table's own entry for k (never one inherited from Object.prototype). */
const ownValue = <T>(o: Record<string, T>, k: string): T | undefined => own(o, k) ? o[k] : undefined
const BLOCKED = new Set(['__proto__', 'constructor', 'prototype', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__'])

const GLOBAL_FNS: Record<string, (...a: unknown[]) => unknown> = {
  String: v => String(v ?? ''),
  Number: v => Number(v),
  Boolean: v => Boolean(v),
  now: () => new Date().toISOString(),
  isEmpty: v => v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v as object).length === 0)
}
const NAMESPACE_FNS: Record<string, Record<string, (...a: unknown[]) => unknown>> = {
  Math: {
    min: (...a) => Math.min(...a.map(Number)),
    max: (...a) => Math.max(...a.map(Number)),
    round: v => Math.round(Number(v)),
    floor: v => Math.floor(Number(v)),
    ceil: v => Math.ceil(Number(v)),
    abs: v => Math.abs(Number(v))
  },
  JSON: {
    stringify: v => JSON.stringify(v),
    parse: v => { try { return JSON.parse(String(v)) } catch { throw new Error('JSON.parse was given text that is not JSON') } }
  }
}
const STRING_METHODS: Record<string, (s: string, ...a: unknown[]) => unknown> = {
  toUpperCase: s => s.toUpperCase(),
  toLowerCase: s => s.toLowerCase(),
  trim: s => s.trim(),
  includes: (s, x) => s.includes(String(x)),
  startsWith: (s, x) => s.startsWith(String(x)),
  endsWith: (s, x) => s.endsWith(String(x)),
  split: (s, x) => s.split(String(x)),
  slice: (s, a, b) => s.slice(Number(a), b === undefined ? undefined : Number(b)),
  indexOf: (s, x) => s.indexOf(String(x)),
  replace: (s, a, b) => s.split(String(a)).join(String(b)),
  toString: (s: string) => s
}
const ARRAY_METHODS: Record<string, (a: unknown[], ...x: unknown[]) => unknown> = {
  includes: (a, x) => a.includes(x),
  join: (a, x) => a.join(x === undefined ? ',' : String(x)),
  slice: (a, s, e) => a.slice(Number(s), e === undefined ? undefined : Number(e)),
  indexOf: (a, x) => a.indexOf(x),
  first: a => a[0],
  last: a => a[a.length - 1]
}

export function compileExpression (src: string): Compiled {
  return build(parseExpression(src))
}

function get (obj: unknown, key: unknown, at: number): unknown {
  if (obj === null || obj === undefined) return undefined
  const k = typeof key === 'number' ? key : String(key)
  if (typeof k === 'string' && BLOCKED.has(k)) throw new ExpressionError(`'${k}' cannot be accessed.`, at)
  if (typeof obj === 'string') return k === 'length' ? obj.length : typeof k === 'number' ? obj[k] : undefined
  if (Array.isArray(obj) && k === 'length') return obj.length
  if (typeof obj !== 'object') return undefined
  return Object.prototype.hasOwnProperty.call(obj, k) ? (obj as Record<string | number, unknown>)[k] : undefined
}

/**
 * `$node['<name>']` or `$json['<id>']` with a literal key: a node looked up by name or by id.
 * Keys starting with `$` (`$json['$item']` in a loop body) are loop values, not nodes: null.
 */
export function nodeLookup (n: Node): { by: 'name' | 'id', key: string } | null {
  if (n.k !== 'member' || n.obj.k !== 'name' || (n.obj.v !== '$node' && n.obj.v !== '$json')) return null
  if (n.prop.k !== 'lit' || typeof n.prop.v !== 'string' || n.prop.v.startsWith('$')) return null
  return { by: n.obj.v === '$node' ? 'name' : 'id', key: n.prop.v }
}

/** Whether an expression names a node: `calc`, `$node['calc']` or `$json['<id>']`. */
function nodeRef (n: Node): ((scope: Scope) => boolean) | null {
  if (n.k === 'name') { const name = n.v; return scope => scope.isNode?.(name) === true }
  if (nodeLookup(n) !== null) return scope => scope.isNode !== undefined
  return null
}

function build (n: Node): Compiled {
  switch (n.k) {
    case 'lit': { const v = n.v; return () => v }
    case 'name': {
      const name = n.v
      if (own(GLOBAL_FNS, name) || own(NAMESPACE_FNS, name)) return () => { throw new ExpressionError(`'${name}' is a function; call it.`, n.at) }
      return scope => scope.root(name)
    }
    case 'member': {
      const obj = build(n.obj)
      const prop = build(n.prop)
      if (n.prop.k === 'lit' && n.prop.v === 'output') {
        // `{{<node>.output}}` is the spec's general form for every node kind: a node whose output
        // has no `output` field of its own (all but set_node) is its output itself.
        const ref = nodeRef(n.obj)
        if (ref !== null) {
          return scope => {
            const base = obj(scope)
            if (ref(scope) && !(base !== null && typeof base === 'object' && Object.prototype.hasOwnProperty.call(base, 'output'))) return base
            return get(base, 'output', n.at)
          }
        }
      }
      return scope => get(obj(scope), prop(scope), n.at)
    }
    case 'unary': {
      const arg = build(n.arg)
      return n.op === '!' ? s => !arg(s) : s => -Number(arg(s))
    }
    case 'cond': {
      const t = build(n.test); const y = build(n.yes); const f = build(n.no)
      return s => t(s) ? y(s) : f(s)
    }
    case 'binary': return binary(n.op, build(n.l), build(n.r))
    case 'call': return call(n)
  }
}

function binary (op: string, l: Compiled, r: Compiled): Compiled {
  switch (op) {
    case '&&': return s => l(s) && r(s)
    case '||': return s => l(s) || r(s)
    case '??': return s => l(s) ?? r(s)
    // Loose equality is deliberate for users comparing "200" with 200.
    // eslint-disable-next-line eqeqeq
    case '==': return s => l(s) == r(s)
    // eslint-disable-next-line eqeqeq
    case '!=': return s => l(s) != r(s)
    case '===': return s => l(s) === r(s)
    case '!==': return s => l(s) !== r(s)
    case '<': return s => (l(s) as number) < (r(s) as number)
    case '<=': return s => (l(s) as number) <= (r(s) as number)
    case '>': return s => (l(s) as number) > (r(s) as number)
    case '>=': return s => (l(s) as number) >= (r(s) as number)
    case '+': return s => {
      const a = l(s); const b = r(s)
      return typeof a === 'number' && typeof b === 'number' ? a + b : `${text(a)}${text(b)}`
    }
    case '-': return s => Number(l(s)) - Number(r(s))
    case '*': return s => Number(l(s)) * Number(r(s))
    case '/': return s => Number(l(s)) / Number(r(s))
    case '%': return s => Number(l(s)) % Number(r(s))
  }
  throw new Error(`unknown operator ${op}`)
}

const text = (v: unknown): string => v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)

function call (n: Extract<Node, { k: 'call' }>): Compiled {
  const args = n.args.map(build)
  const argv = (s: Scope) => args.map(a => a(s))
  const c = n.callee
  if (c.k === 'name') {
    const fn = ownValue(GLOBAL_FNS, c.v)
    if (fn === undefined) throw new ExpressionError(`'${c.v}' is not a function you can call here.`, c.at)
    return s => fn(...argv(s))
  }
  if (c.k === 'member' && c.prop.k === 'lit' && typeof c.prop.v === 'string') {
    const method = c.prop.v
    const ns = c.obj.k === 'name' ? ownValue(NAMESPACE_FNS, c.obj.v) : undefined
    if (c.obj.k === 'name' && ns !== undefined) {
      const fn = ownValue(ns, method)
      if (fn === undefined) throw new ExpressionError(`${c.obj.v}.${method} is not available.`, c.at)
      return s => fn(...argv(s))
    }
    const target = build(c.obj)
    return s => {
      const obj = target(s)
      // `$input.all()` / `.first()` and similar host objects expose plain functions by name.
      if (obj !== null && typeof obj === 'object' && !Array.isArray(obj) && HOST_FNS in (obj as object)) {
        const fns = (obj as { [HOST_FNS]: Record<string, (...a: unknown[]) => unknown> })[HOST_FNS]
        const fn = ownValue(fns, method)
        if (fn !== undefined) return fn(...argv(s))
      }
      if (typeof obj === 'string') {
        const m = ownValue(STRING_METHODS, method)
        if (m !== undefined) return m(obj, ...argv(s))
      }
      if (Array.isArray(obj)) {
        const m = ownValue(ARRAY_METHODS, method)
        if (m !== undefined) return m(obj, ...argv(s))
      }
      if (method === 'toString' && obj !== undefined && obj !== null) return text(obj)
      throw new ExpressionError(`'${method}' cannot be called on ${obj === null ? 'null' : Array.isArray(obj) ? 'a list' : typeof obj}.`, c.at)
    }
  }
  throw new ExpressionError('Only named functions and methods can be called.', n.at)
}

/** Marks host objects (like `$input`) whose listed functions expressions may call. */
export const HOST_FNS = Symbol('expression host functions')
