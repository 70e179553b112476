/**
 * parallel_node: passes its input to every outgoing edge (the engine runs ready
 * nodes concurrently). `branches`, when set, must equal the number of edges leaving it.
 */
import { int, plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const parallelNode: NodeType = {
  description: plain('parallel_node', 'flow', 'Passes its input to every outgoing edge; the branches run concurrently.', {
    branches: int(1, 100)
  }, [], 'its input, on every outgoing edge', 'Connect one outgoing edge per branch (no handles; branches, when set, must equal their count); join them again with a merge_node.'),
  run: async ctx => ({ output: ctx.input }),
  // One branch per outgoing edge: a branch left unconnected (or one too many) is caught at save.
  checkInDefinition: (n, d) => {
    if (typeof n.settings?.branches !== 'number') return []
    const out = d.edges.filter(e => e.source === n.id).length
    if (out === n.settings.branches) return []
    return [{ node_id: n.id, field: 'settings.branches', message: `Node '${n.name}' (parallel_node): settings.branches is ${n.settings.branches} but ${out} edge${out === 1 ? '' : 's'} leave${out === 1 ? 's' : ''} it; connect one edge per branch or change branches.` }]
  }
}
