/**
 * loop_node: `items` (an expression giving a list). The body (nodes reached from
 * the `loop` or empty handle) runs once per item, one item after another, with
 * `$json['$item']`, `$json['$index']` and `$json['$loop']` in scope; then the
 * `done` edges run with `{ items: [each iteration's last body output] }`.
 */
import { NodeError, type NodeContext, type NodeResult } from '../engine/types.js'

export const MAX_LOOP_ITEMS = 10_000

export const runLoop = async (ctx: NodeContext): Promise<NodeResult> => {
  const items = ctx.settings.items
  if (items === undefined || items === null) throw new NodeError(`Loop '${ctx.node.name}' needs items: an expression giving a list, such as {{fetch.response.body.orders}}.`)
  if (!Array.isArray(items)) throw new NodeError(`Loop '${ctx.node.name}': items must be a list, but the expression gave ${typeof items === 'object' ? 'an object' : `a ${typeof items}`}.`)
  if (items.length > MAX_LOOP_ITEMS) throw new NodeError(`Loop '${ctx.node.name}' was given ${items.length} items; at most ${MAX_LOOP_ITEMS} are allowed.`)
  const results: unknown[] = []
  for (let i = 0; i < items.length; i++) results.push(await ctx.run.iterate(items[i], i, items.length))
  // A partial run whose destination is inside the body runs every iteration and goes no further.
  return { output: { items: results }, handles: ctx.run.stopAfter() ? [] : ['done'] }
}
