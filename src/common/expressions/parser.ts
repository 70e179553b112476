/**
 * A Pratt parser for expressions: literals, names, member access (`.x`, `['x']`,
 * `?.x`), calls of whitelisted functions, unary `! -`, arithmetic, comparison,
 * `&& || ??` and the ternary. It builds a small AST that compile.ts turns into
 * closures once; nothing here ever evaluates JavaScript.
 */
import { ExpressionError, tokenize, type Token } from './lexer.js'

export type Node =
  | { k: 'lit', v: unknown }
  | { k: 'name', v: string, at: number }
  | { k: 'member', obj: Node, prop: Node, optional: boolean, at: number }
  | { k: 'call', callee: Node, args: Node[], at: number }
  | { k: 'unary', op: string, arg: Node }
  | { k: 'binary', op: string, l: Node, r: Node }
  | { k: 'cond', test: Node, yes: Node, no: Node }

const BINARY: Record<string, number> = {
  '??': 1, '||': 2, '&&': 3, '==': 4, '!=': 4, '===': 4, '!==': 4, '<': 5, '<=': 5, '>': 5, '>=': 5, '+': 6, '-': 6, '*': 7, '/': 7, '%': 7
}

export function parseExpression (src: string): Node {
  const toks = tokenize(src)
  let p = 0
  // The list ends with an `end` token, which nothing consumes: reading past it reads it again.
  const end = toks[toks.length - 1] ?? { t: 'end', at: src.length }
  const at = (i: number): Token => toks[i] ?? end
  const peek = (): Token => at(p)
  const isOp = (v: string) => { const t = peek(); return t.t === 'op' && t.v === v }
  const expect = (v: string) => {
    if (!isOp(v)) throw new ExpressionError(`Expected '${v}'.`, peek().at)
    p++
  }

  function primary (): Node {
    const t = at(p++)
    switch (t.t) {
      case 'num': return { k: 'lit', v: t.v }
      case 'str': return { k: 'lit', v: t.v }
      case 'id':
        if (t.v === 'true') return { k: 'lit', v: true }
        if (t.v === 'false') return { k: 'lit', v: false }
        if (t.v === 'null') return { k: 'lit', v: null }
        if (t.v === 'undefined') return { k: 'lit', v: undefined }
        return { k: 'name', v: t.v, at: t.at }
      case 'op':
        if (t.v === '(') { const e = expr(0); expect(')'); return e }
        if (t.v === '!' || t.v === '-') return { k: 'unary', op: t.v, arg: postfix(primary()) }
        throw new ExpressionError(`Unexpected '${t.v}'.`, t.at)
      case 'end': throw new ExpressionError('The expression ends too early.', t.at)
    }
  }

  function postfix (node: Node): Node {
    for (;;) {
      const t = peek()
      if (t.t !== 'op') return node
      if (t.v === '.' || t.v === '?.') {
        p++
        const name = at(p)
        if (t.v === '?.' && name.t === 'op' && name.v === '[') {
          p++
          const prop = expr(0)
          expect(']')
          node = { k: 'member', obj: node, prop, optional: true, at: t.at }
          continue
        }
        if (name.t !== 'id') throw new ExpressionError('Expected a property name after the dot.', name.at)
        p++
        node = { k: 'member', obj: node, prop: { k: 'lit', v: name.v }, optional: t.v === '?.', at: t.at }
      } else if (t.v === '[') {
        p++
        const prop = expr(0)
        expect(']')
        node = { k: 'member', obj: node, prop, optional: false, at: t.at }
      } else if (t.v === '(') {
        p++
        const args: Node[] = []
        while (!isOp(')')) {
          args.push(expr(0))
          if (!isOp(')')) expect(',')
        }
        p++
        node = { k: 'call', callee: node, args, at: t.at }
      } else return node
    }
  }

  function expr (minPrec: number): Node {
    let left = postfix(primary())
    for (;;) {
      const t = peek()
      if (t.t !== 'op') break
      if (t.v === '?' && minPrec === 0) {
        p++
        const yes = expr(0)
        expect(':')
        const no = expr(0)
        left = { k: 'cond', test: left, yes, no }
        continue
      }
      const prec = BINARY[t.v]
      if (prec === undefined || prec <= minPrec) break
      p++
      left = { k: 'binary', op: t.v, l: left, r: expr(prec) }
    }
    return left
  }

  const node = expr(0)
  if (peek().t !== 'end') throw new ExpressionError(`Unexpected '${(peek() as { v?: unknown }).v ?? ''}' after the expression.`, peek().at)
  return node
}
