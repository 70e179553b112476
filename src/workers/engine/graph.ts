/**
 * The graph a run schedules, split into levels by loop nodes (node types with
 * `bodyHandles`, src/workers/nodes/node-type.ts):
 *
 *   trigger ─> a ─> loop ──(done)──> c            top level: trigger, a, loop, c
 *                    │ (loop / empty handle)
 *                    └─> b1 ─> b2 ─┐              loop body: b1, b2 (a level of its own,
 *                         ▲        │ back to loop  run once per item)
 *                         └────────┘
 *
 * A loop's body is every node reachable from its `loop` (or empty) handle without
 * passing through the loop itself; edges back into the loop end an iteration.
 * Bodies are cut out of the enclosing level, so the loop's only edges there are
 * its `done` edges. Nested loops nest levels. Levels are built once per run.
 */
import type { WorkflowDefinition, WorkflowEdge } from '../../common/types.js'
import { isBodyHandle, nodeType } from '../nodes/registry.js'

export interface Level {
  /** Nodes this level schedules (bodies of its loops removed). */
  inner: Set<string>
  outEdges: Map<string, WorkflowEdge[]>
  inEdges: Map<string, WorkflowEdge[]>
  /** For each loop node of this level, the level of its body. */
  bodies: Map<string, Level>
  /** Edges entering this level from its loop node (the loop's body edges). */
  entryEdges: WorkflowEdge[]
}


export function buildLevels (def: WorkflowDefinition): Level {
  const ids = new Set(def.nodes.map(n => n.id))
  // A loop's type, by id: its edges on body handles lead into its body.
  const loops = new Map(def.nodes.filter(n => nodeType(n.type)?.bodyHandles !== undefined).map(n => [n.id, n.type]))
  const out = new Map<string, WorkflowEdge[]>()
  for (const e of def.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) continue
    ;(out.get(e.source) ?? out.set(e.source, []).get(e.source)!).push(e)
  }
  const build = (set: Set<string>, entryEdges: WorkflowEdge[]): Level => {
    const bodySets = new Map<string, Set<string>>()
    for (const id of set) {
      const loopType = loops.get(id)
      if (loopType !== undefined) bodySets.set(id, bodyOf(id, loopType, set, out))
    }
    const inner = new Set(set)
    for (const b of bodySets.values()) for (const id of b) inner.delete(id)
    const entry = new Set(entryEdges)
    const outEdges = new Map<string, WorkflowEdge[]>()
    const inEdges = new Map<string, WorkflowEdge[]>()
    for (const list of out.values()) {
      for (const e of list) {
        if (!inner.has(e.target) || !(inner.has(e.source) || entry.has(e))) continue
        if (inner.has(e.source)) (outEdges.get(e.source) ?? outEdges.set(e.source, []).get(e.source)!).push(e)
        ;(inEdges.get(e.target) ?? inEdges.set(e.target, []).get(e.target)!).push(e)
      }
    }
    const bodies = new Map<string, Level>()
    for (const [id, b] of bodySets) {
      if (inner.has(id)) bodies.set(id, build(b, (out.get(id) ?? []).filter(e => isBodyHandle(loops.get(id) ?? '', e.sourceHandle) && b.has(e.target))))
    }
    return { inner, outEdges, inEdges, bodies, entryEdges }
  }
  return build(ids, [])
}

function bodyOf (loopId: string, loopType: string, set: Set<string>, out: Map<string, WorkflowEdge[]>): Set<string> {
  const body = new Set<string>()
  const stack = (out.get(loopId) ?? []).filter(e => isBodyHandle(loopType, e.sourceHandle)).map(e => e.target)
  while (stack.length > 0) {
    const id = stack.pop()!
    if (id === loopId || body.has(id) || !set.has(id)) continue
    body.add(id)
    for (const e of out.get(id) ?? []) stack.push(e.target)
  }
  return body
}

/** The level whose scheduled nodes include `id` (for partial runs starting inside a loop body). */
export function levelOf (top: Level, id: string): Level | undefined {
  if (top.inner.has(id)) return top
  for (const child of top.bodies.values()) {
    const found = levelOf(child, id)
    if (found !== undefined) return found
  }
  return undefined
}
