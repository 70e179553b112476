/**
 * Where nodes that arrive with a reload (another client's save) go: a node new to this screen
 * keeps its saved position when that lies in the visible canvas; otherwise (no position, or one
 * off the visible area) it is placed inside it, cascading from the top-left corner, instead of
 * at the end of a row past the canvas's edge. Saving keeps the new position.
 */
import type { Definition, GraphNode } from './workflow-model'

// About a node's size on the canvas at zoom 1 (its card is 180 px wide).
const NODE_W = 200
const NODE_H = 90

export function placeInView (
  nodes: GraphNode[], shown: Set<string>, def: Definition | null, rect: DOMRect,
  toFlow: (p: { x: number, y: number }) => { x: number, y: number }
): GraphNode[] {
  const tl = toFlow({ x: rect.left + 30, y: rect.top + 30 })
  const br = toFlow({ x: rect.right - 30, y: rect.bottom - 30 })
  const saved = new Map((def?.nodes ?? []).map(n => [n.id, n.position]))
  const visible = (p: { x: number, y: number }) => p.x >= tl.x && p.y >= tl.y && p.x + NODE_W <= br.x && p.y + NODE_H <= br.y
  let k = 0
  return nodes.map(n => {
    if (shown.has(n.id)) return n
    const at = saved.get(n.id)
    if (at !== undefined && visible(at)) return n
    const x = Math.max(tl.x, Math.min(tl.x + 40 + k * 40, br.x - NODE_W))
    const y = Math.max(tl.y, Math.min(tl.y + 40 + k * 40, br.y - NODE_H))
    k++
    return { ...n, position: { x, y } }
  })
}
