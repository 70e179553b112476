/**
 * merge_node: joins the outputs of the branches that ran. The engine runs a node
 * once every incoming edge has settled (delivered or skipped), so a merge waits
 * exactly for the branches that will run; its inputs arrive as `ctx.inputs`.
 */
import { plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const mergeNode: NodeType = {
  description: plain('merge_node', 'flow', 'Waits for all connected inputs, then joins the outputs of the branches that ran.', {}, [],
    '{items: [outputs of the branches that ran]}', 'Connect two or more incoming edges. It runs once every input has either delivered or been skipped (a condition\'s other handle): after both outputs of a condition it joins the one that ran.'),
  run: async ctx => ({ output: { items: ctx.inputs } })
}
