/** delay_node: `delay_ms`; waits, then passes its input on (the run's deadline aborts the wait). */
import { NodeError } from '../engine/types.js'
import { int, plain } from './describe.js'
import type { NodeType } from './node-type.js'

export const delayNode: NodeType = {
  description: plain('delay_node', 'flow', 'Waits, then passes its input on (aborted at the run deadline).', {
    delay_ms: int(0, 3_600_000)
  }, [], 'its input', 'One input, one output. delay_ms defaults to 0.'),
  run: async ctx => {
    const ms = Number(ctx.settings.delay_ms ?? 0)
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, Math.max(0, ms))
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(new NodeError('The run reached its deadline during a delay.')) }, { once: true })
    })
    return { output: ctx.input }
  }
}
