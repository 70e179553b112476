/**
 * `{{ … }}` templates in node settings, parsed once. A value that is exactly one
 * `{{ }}` takes the expression's value with its type; text with embedded
 * expressions becomes a string. Text from data is never re-parsed: a `{{` that
 * arrives in a request body is just characters.
 */
import { ExpressionError } from './lexer.js'
import { compileExpression, type Compiled, type Scope } from './compile.js'

export type Template = (scope: Scope) => unknown

/** Each `{{ … }}` in a text, the expression in group 1. */
export const TEMPLATE_PART = /\{\{([\s\S]*?)\}\}/g

export function compileTemplate (text: string): Template {
  const whole = /^\{\{([\s\S]*?)\}\}$/.exec(text)
  // Group 1 is not optional: it is there whenever the expression matched.
  if (whole !== null && !whole[1]!.includes('{{')) {
    return reporting(wrap(whole[1]!, 2), whole[0])
  }
  if (!text.includes('{{')) return () => text
  const parts: Array<string | Compiled> = []
  let last = 0
  for (const m of text.matchAll(TEMPLATE_PART)) {
    if (m.index > last) parts.push(text.slice(last, m.index))
    parts.push(reporting(wrap(m[1]!, m.index + 2), m[0]))
    last = m.index + m[0].length
  }
  if (last < text.length) parts.push(text.slice(last))
  return s => parts.map(p => typeof p === 'string' ? p : str(p(s))).join('')
}

/** The expression, telling the scope when its value came out undefined (`src` is the whole `{{ }}`). */
function reporting (e: Compiled, src: string): Compiled {
  return s => { const v = e(s); if (v === undefined) s.miss?.(src); return v }
}

function wrap (src: string, offset: number): Compiled {
  try {
    return compileExpression(src)
  } catch (err) {
    if (err instanceof ExpressionError) throw new ExpressionError(`${err.message} (in '{{${src}}}' at ${err.position + offset})`, err.position + offset)
    throw err
  }
}

const str = (v: unknown): string => v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)

/** Compiles every string inside a settings value (objects and arrays walked once). */
export function compileSettings (value: unknown): Template {
  if (typeof value === 'string') return compileTemplate(value)
  if (Array.isArray(value)) {
    const items = value.map(compileSettings)
    return s => items.map(i => i(s))
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => [k, compileSettings(v)] as const)
    return s => Object.fromEntries(entries.map(([k, t]) => [k, t(s)]))
  }
  return () => value
}

export { ExpressionError }
export type { Scope }
