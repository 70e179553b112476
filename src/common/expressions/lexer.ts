/** Tokens of the workflow expression language (the text between `{{` and `}}`). */

export type Token =
  | { t: 'num', v: number, at: number }
  | { t: 'str', v: string, at: number }
  | { t: 'id', v: string, at: number }
  | { t: 'op', v: string, at: number }
  | { t: 'end', at: number }

export class ExpressionError extends Error {
  override name = 'ExpressionError'
  constructor (message: string, readonly position: number) { super(message) }
}

const OPS = ['===', '!==', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '.', ',', '(', ')', '[', ']']

export function tokenize (src: string): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src.charAt(i)
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') { i++; continue }
    if (/[0-9]/.test(c)) {
      const m = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i))!
      out.push({ t: 'num', v: Number(m[0]), at: i })
      i += m[0].length
      continue
    }
    if (c === '"' || c === "'") {
      let j = i + 1
      let s = ''
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\\' && j + 1 < src.length) {
          const e = src[j + 1]
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e
          j += 2
        } else s += src[j++]
      }
      if (j >= src.length) throw new ExpressionError('A string is not closed.', i)
      out.push({ t: 'str', v: s, at: i })
      i = j + 1
      continue
    }
    if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i))!
      out.push({ t: 'id', v: m[0], at: i })
      i += m[0].length
      continue
    }
    const op = OPS.find(o => src.startsWith(o, i))
    if (op === undefined) throw new ExpressionError(`Unexpected character '${c}'.`, i)
    out.push({ t: 'op', v: op, at: i })
    i += op.length
  }
  out.push({ t: 'end', at: src.length })
  return out
}
