/** response_node: `status`, `headers`, `body`; its output is the run's answer (the first one to run answers). */
import { NodeError } from '../engine/types.js'
import { anyValue, int, object, plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const responseNode: NodeType = {
  description: {
    ...plain('response_node', 'action', 'The answer of the workflow (status, headers, body).', {
      status: int(100, 599),
      headers: object('an object of header names to values'),
      body: anyValue('any value; text, object or a {{ }} expression')
    }, [], '{status, headers, body}: the answer the gateway sends', 'Ends a path: nothing needs to follow it. Put one on every path that should answer; the first one that runs answers.'),
    terminal_node: true
  },
  run: async ctx => {
    const status = Number(ctx.settings.status ?? 200)
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new NodeError(`status ${String(ctx.settings.status)} is not an HTTP status.`)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries((ctx.settings.headers ?? {}) as Record<string, unknown>)) headers[k.toLowerCase()] = String(v)
    return { output: { status, headers, body: ctx.settings.body ?? null } }
  },
  answers: true
}
