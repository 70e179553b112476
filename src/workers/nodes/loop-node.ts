/**
 * loop_node: `items` (an expression giving a list). The body (nodes reached from
 * the `loop` or empty handle) runs once per item, one item after another, with
 * `$json['$item']`, `$json['$index']` and `$json['$loop']` in scope; then the
 * `done` edges run with `{ items: [each iteration's last body output] }`.
 */
import { NodeError } from '../engine/types.js'
import { expr, plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const MAX_LOOP_ITEMS = 10_000

export const loopNode: NodeType = {
  description: {
    ...plain('loop_node', 'flow', 'Runs the nodes on its loop edge once per item, then follows its done edge.', {
      items: { anyOf: [{ type: 'array' }, expr], description: 'a {{ }} expression giving a list (or a literal list)' }
    }, ['items'], 'per item: the item with $json[\'$item\'], $json[\'$index\'], $json[\'$loop\']; on done: {items: [outputs of each iteration]}',
    'Wire the per-item body from sourceHandle "loop" (or empty) and lead the body\'s last node back to the loop node; wire what follows from sourceHandle "done".'),
    requires_source_handle: false,
    supported_source_handles: ['loop', 'done'],
    default_source_handle: 'loop'
  },
  run: async ctx => {
    const items = ctx.settings.items
    if (items === undefined || items === null) throw new NodeError(`Loop '${ctx.node.name}' needs items: an expression giving a list, such as {{fetch.response.body.orders}}.`)
    if (!Array.isArray(items)) throw new NodeError(`Loop '${ctx.node.name}': items must be a list, but the expression gave ${typeof items === 'object' ? 'an object' : `a ${typeof items}`}.`)
    if (items.length > MAX_LOOP_ITEMS) throw new NodeError(`Loop '${ctx.node.name}' was given ${items.length} items; at most ${MAX_LOOP_ITEMS} are allowed.`)
    const results: unknown[] = []
    for (let i = 0; i < items.length; i++) results.push(await ctx.run.iterate(items[i], i, items.length))
    // A partial run whose destination is inside the body runs every iteration and goes no further.
    return { output: { items: results }, handles: ctx.run.stopAfter() ? [] : ['done'] }
  },
  // The body: every node reached from the `loop` (or empty) handle; engine/graph.ts cuts it into a level of its own.
  bodyHandles: ['loop', ''],
  sourceHandles: () => ({ handles: ['loop', '', 'done'], required: false }),
  // A pinned loop skips its body and goes on to done.
  pinnedHandles: () => ['done']
}
