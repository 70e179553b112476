/** Nodes that need no I/O: triggers, set, condition, response, delay, parallel, merge. */
import { NodeError, type NodeContext, type NodeResult } from '../engine/types.js'

export const passTrigger = async (ctx: NodeContext): Promise<NodeResult> => ({ output: ctx.input })

export const runSet = async (ctx: NodeContext): Promise<NodeResult> => ({ output: { output: ctx.settings.values ?? {} } })

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

export const runCondition = async (ctx: NodeContext): Promise<NodeResult> => {
  const conds = (ctx.settings.conditions ?? []) as Cond[]
  const all = ctx.settings.combine === 'or' ? conds.some(test) : conds.every(test)
  return { output: { result: all, input: ctx.input }, handles: [all ? 'true' : 'false'] }
}

export const runResponse = async (ctx: NodeContext): Promise<NodeResult> => {
  const status = Number(ctx.settings.status ?? 200)
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new NodeError(`status ${String(ctx.settings.status)} is not an HTTP status.`)
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries((ctx.settings.headers ?? {}) as Record<string, unknown>)) headers[k.toLowerCase()] = String(v)
  return { output: { status, headers, body: ctx.settings.body ?? null } }
}

export const runDelay = async (ctx: NodeContext): Promise<NodeResult> => {
  const ms = Number(ctx.settings.delay_ms ?? 0)
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, Math.max(0, ms))
    ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(new NodeError('The run reached its deadline during a delay.')) }, { once: true })
  })
  return { output: ctx.input }
}

export const runParallel = async (ctx: NodeContext): Promise<NodeResult> => ({ output: ctx.input })

export const runMerge = async (ctx: NodeContext): Promise<NodeResult> => ({ output: { items: ctx.inputs } })
