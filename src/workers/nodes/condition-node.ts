/**
 * condition_node: `conditions` [{left, operator, right}], `combine` and | or.
 * Output `{ result, input }` on handle `true` or `false`.
 */
import { NodeError } from '../engine/types.js'
import { expr, plain } from './describe.js'
import type { NodeType } from './node-type.js'

const CONDITION_OPERATORS = ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists', 'matches']

type Cond = { left?: unknown, operator?: string, right?: unknown }

function test (c: Cond): boolean {
  const l = c.left
  const r = c.right
  switch (c.operator ?? 'equals') {
    // Loose comparison so "200" equals 200, as users expect from form fields.
    // eslint-disable-next-line eqeqeq
    case 'equals': return l == r
    // eslint-disable-next-line eqeqeq
    case 'not_equals': return l != r
    case 'gt': return Number(l) > Number(r)
    case 'gte': return Number(l) >= Number(r)
    case 'lt': return Number(l) < Number(r)
    case 'lte': return Number(l) <= Number(r)
    case 'contains': return Array.isArray(l) ? l.includes(r) : String(l ?? '').includes(String(r ?? ''))
    case 'exists': return l !== undefined && l !== null
    case 'matches': {
      const src = String(r ?? '')
      if (src.length > 200) throw new NodeError('A matches pattern may be at most 200 characters.')
      return new RegExp(src).test(String(l ?? '').slice(0, 10_000))
    }
    default: throw new NodeError(`Unknown condition operator '${c.operator}'.`)
  }
}

export const conditionNode: NodeType = {
  description: {
    ...plain('condition_node', 'flow', 'Tests conditions and follows its true or its false edges.', {
      conditions: {
        anyOf: [{
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['left', 'operator'],
            properties: { left: {}, operator: { type: 'string', enum: CONDITION_OPERATORS }, right: {} }
          }
        }, expr],
        description: `a list of {left, operator, right}; operators ${CONDITION_OPERATORS.join(', ')}`
      },
      combine: { type: 'string', enum: ['and', 'or'], description: '"and" (default) or "or"' }
    }, [], '{result, input}', 'Every outgoing edge needs sourceHandle "true" or "false".'),
    requires_source_handle: true,
    supported_source_handles: ['true', 'false'],
    default_source_handle: 'true'
  },
  run: async ctx => {
    const conds = (ctx.settings.conditions ?? []) as Cond[]
    const all = ctx.settings.combine === 'or' ? conds.some(test) : conds.every(test)
    return { output: { result: all, input: ctx.input }, handles: [all ? 'true' : 'false'] }
  },
  // A condition reading an HTTP answer's {{<name>.response.status}} branches on it: the workflow handles a non-2xx answer.
  handlesStatus: true,
  pinnedHandles: out => [(out as { result?: unknown })?.result === false ? 'false' : 'true']
}
