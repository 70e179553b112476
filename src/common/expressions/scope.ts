/**
 * The names an expression can start from inside a workflow run:
 *   trigger            the entry trigger's output, plus `params` = its request path_params
 *   <node name>        a node's output by name: {{fetch.response.status}}; {{<node>.output}} is
 *                      the output itself for every node whose output has no `output` field
 *   $node['<name>']    the same, for names that are not identifiers
 *   $json['<id>']      a node's output by id; $json['$item'|'$index'|'$loop'] in a loop body
 *   $workflow, $execution, $input (with $input.all() / $input.first())
 */
import { HOST_FNS, type Scope } from './compile.js'

export interface RunContext {
  trigger: unknown
  byName: ReadonlyMap<string, unknown>
  byId: ReadonlyMap<string, unknown>
  workflow: Record<string, unknown>
  execution: Record<string, unknown>
  /** Outputs of the nodes feeding the current one, in edge order. */
  inputs: unknown[]
  loop?: { item: unknown, index: number, loop: Record<string, unknown> }
  /** Told of each expression that referred to nothing (recorded on the node's execution record). */
  miss?: (src: string) => void
}

/** The names an expression can start from besides node names (see above). */
export const SCOPE_ROOTS: readonly string[] = ['trigger', '$json', '$node', '$workflow', '$execution', '$input']

export function workflowScope (ctx: RunContext): Scope {
  const trigger = withParams(ctx.trigger)
  const json: Record<string, unknown> = Object.create(null)
  for (const [id, out] of ctx.byId) json[id] = out
  if (ctx.loop !== undefined) {
    json.$item = ctx.loop.item
    json.$index = ctx.loop.index
    json.$loop = ctx.loop.loop
  }
  const node: Record<string, unknown> = Object.create(null)
  for (const [name, out] of ctx.byName) node[name] = out
  const input = { [HOST_FNS]: { all: () => ctx.inputs, first: () => ctx.inputs[0] }, length: ctx.inputs.length }
  const roots: Record<string, unknown> = {
    trigger,
    $json: { ...json },
    $node: { ...node },
    $workflow: ctx.workflow,
    $execution: ctx.execution,
    $input: input
  }
  return {
    has: name => Object.prototype.hasOwnProperty.call(roots, name) || ctx.byName.has(name),
    root: name => Object.prototype.hasOwnProperty.call(roots, name) ? roots[name] : ctx.byName.get(name),
    isNode: name => !Object.prototype.hasOwnProperty.call(roots, name) && ctx.byName.has(name),
    ...(ctx.miss !== undefined ? { miss: ctx.miss } : {})
  }
}

function withParams (trigger: unknown): unknown {
  if (trigger === null || typeof trigger !== 'object') return trigger
  const req = (trigger as { request?: { path_params?: unknown } }).request
  return { ...(trigger as object), params: req?.path_params ?? {} }
}
