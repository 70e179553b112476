/**
 * Warnings about `{{ }}` references that can resolve to nothing: a name that is no node of the
 * workflow (nor a built-in root), `$node['…']` / `$json['…']` naming no node, or a field that the
 * node kind never outputs (`{{fetch.respones}}` on an HTTP request node). A save still succeeds
 * (the warning travels with the answer); at run time such a reference becomes empty and the
 * node's execution record lists it under `unresolved`.
 */
import type { WorkflowDefinition } from '../../common/types.js'
import { parseExpression, type Node } from '../../common/expressions/parser.js'
import { isFunctionName, nodeLookup } from '../../common/expressions/compile.js'
import { SCOPE_ROOTS } from '../../common/expressions/scope.js'
import { TEMPLATE_PART } from '../../common/expressions/template.js'
import type { WorkflowProblem } from './definition.js'

const ROOTS = new Set(SCOPE_ROOTS)
/** What each node kind outputs at the top level, where it is fixed; `output` works for every kind. */
const FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  http_request_node: new Set(['response', 'timedOut', 'output']),
  set_node: new Set(['output']),
  delay_node: new Set(['output'])
}
const MAX_WARNINGS = 50

export function referenceWarnings (def: WorkflowDefinition): WorkflowProblem[] {
  const byName = new Map(def.nodes.map(n => [n.name, n]))
  const ids = new Set(def.nodes.map(n => n.id))
  const out: WorkflowProblem[] = []
  const seen = new Set<string>()
  const warn = (nodeId: string, field: string, message: string) => {
    const key = `${nodeId}\n${message}`
    if (seen.has(key) || out.length >= MAX_WARNINGS) return
    seen.add(key)
    out.push({ node_id: nodeId, field, message })
  }
  for (const node of def.nodes) {
    for (const [field, text] of strings(node.settings ?? {}, 'settings')) {
      for (const m of text.matchAll(TEMPLATE_PART)) {
        let ast: Node
        try { ast = parseExpression(m[1] ?? '') } catch { continue } // syntax errors are the definition check's
        for (const ref of references(ast)) {
          const shown = m[0].length > 80 ? `${m[0].slice(0, 77)}...` : m[0]
          if (ref.kind === 'name') {
            if (ROOTS.has(ref.name) || isFunctionName(ref.name)) continue
            const target = byName.get(ref.name)
            if (target === undefined) { warn(node.id, field, `${shown} refers to '${ref.name}', which is no node of this workflow: it will be empty.`); continue }
            const fields = FIELDS[target.type]
            if (ref.field !== undefined && fields !== undefined && !fields.has(ref.field)) {
              warn(node.id, field, `${shown}: a ${target.type} has no '${ref.field}' (it outputs ${[...fields].join(', ')}): it will be empty.`)
            }
          } else if (ref.kind === 'node' && !byName.has(ref.name)) {
            warn(node.id, field, `${shown} refers to the node named '${ref.name}', which this workflow does not have: it will be empty.`)
          } else if (ref.kind === 'id' && !ids.has(ref.name)) {
            warn(node.id, field, `${shown} refers to the node id '${ref.name}', which this workflow does not have: it will be empty.`)
          }
        }
      }
    }
  }
  return out
}

type Ref = { kind: 'name', name: string, field?: string } | { kind: 'node' | 'id', name: string }

/** The roots an expression reads from, with the first field read from a plain name. */
function references (n: Node): Ref[] {
  const out: Ref[] = []
  const walk = (x: Node, field?: string): void => {
    switch (x.k) {
      case 'name': out.push({ kind: 'name', name: x.v, ...(field !== undefined ? { field } : {}) }); return
      case 'member': {
        const lookup = nodeLookup(x)
        if (lookup !== null) { out.push({ kind: lookup.by === 'name' ? 'node' : 'id', name: lookup.key }); return }
        walk(x.obj, x.obj.k === 'name' && x.prop.k === 'lit' && typeof x.prop.v === 'string' ? x.prop.v : undefined)
        if (x.prop.k !== 'lit') walk(x.prop)
        return
      }
      case 'call': walk(x.callee); for (const a of x.args) walk(a); return
      case 'unary': walk(x.arg); return
      case 'binary': walk(x.l); walk(x.r); return
      case 'cond': walk(x.test); walk(x.yes); walk(x.no); return
      case 'lit': return
    }
  }
  walk(n)
  return out
}

function * strings (value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === 'string') { if (value.includes('{{')) yield [at, value]; return }
  if (Array.isArray(value)) { for (let i = 0; i < value.length; i++) yield * strings(value[i], `${at}[${i}]`); return }
  if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield * strings(v, `${at}.${k}`)
}
