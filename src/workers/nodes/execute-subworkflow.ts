/**
 * execute_subworkflow: `workflow_id`, `input` (the sub-run's trigger output,
 * default this node's input). The definition comes in the task (the main thread
 * resolved it); the sub-run runs here, in the same worker, under the same
 * deadline and at most MAX_DEPTH levels deep. Its output is the sub-run's
 * response body (the response node's body, or its last node's output).
 */
import { NodeError } from '../engine/types.js'
import { anyValue, plain, required } from './describe.js'
import type { NodeType } from './node-type.js'

export const MAX_DEPTH = 5

export const executeSubworkflow: NodeType = {
  description: plain('execute_subworkflow', 'flow', 'Runs another proxy\'s workflow with an input and returns its answer.', {
    workflow_id: required('the workflow_id of the proxy whose workflow runs'),
    input: anyValue('a {{ }} expression giving the sub-workflow\'s trigger output')
  }, ['workflow_id'], 'the sub-workflow\'s response body (or its last node\'s output)', 'One input, one output. Sub-workflows nest at most 5 levels.'),
  run: async ctx => {
    const id = ctx.settings.workflow_id
    if (typeof id !== 'string' || id === '') throw new NodeError(`Sub-workflow node '${ctx.node.name}' needs a workflow_id.`)
    const depth = (ctx.run.task.depth ?? 0) + 1
    if (depth > MAX_DEPTH) throw new NodeError(`Sub-workflows may nest at most ${MAX_DEPTH} levels deep; '${ctx.node.name}' would start level ${depth}.`)
    const subs = ctx.run.task.subworkflows ?? {}
    const def = Object.prototype.hasOwnProperty.call(subs, id) ? subs[id] : undefined
    if (def === undefined) throw new NodeError(`Workflow '${id}' (called by '${ctx.node.name}') does not exist or has no definition.`)
    const input = ctx.settings.input === undefined ? ctx.input : ctx.settings.input
    const r = await ctx.run.runSub(def, id, input)
    if (r.status !== 'success') {
      const at = r.error?.node_id !== null && r.error?.node_id !== undefined ? ` at node '${r.error.node_id}'` : ''
      throw new NodeError(`Workflow '${id}' failed${at}: ${r.error?.message ?? 'no answer'}`)
    }
    return { output: r.response?.body ?? null }
  },
  // Literal ids only: an id given by an expression cannot be known before the run.
  needs: { subworkflowId: settings => typeof settings.workflow_id === 'string' && settings.workflow_id !== '' && !settings.workflow_id.includes('{{') ? settings.workflow_id : undefined }
}
