/** set_node: `values` (an object whose values may be expressions); output `{ output: values }`. */
import { object, plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const setNode: NodeType = {
  description: plain('set_node', 'data', 'Builds an object from values (each may be an expression).', {
    values: object('an object whose values may be {{ }} expressions')
  }, [], '{output: <values>}', 'One input, one output.'),
  run: async ctx => ({ output: { output: ctx.settings.values ?? {} } })
}
