/**
 * Bounds what an execution record keeps: a node input or output, the trigger
 * output or the answer larger than MAX_VALUE_BYTES of JSON is replaced by a
 * marker, so one large response body cannot bloat the executions table.
 */
import type { ExecutionRecord } from '../store/executions.js'

export const MAX_VALUE_BYTES = 256 * 1024

export function bounded (value: unknown): unknown {
  if (value === undefined) return null
  let text: string | undefined
  try { text = JSON.stringify(value) } catch { return { truncated: true, reason: 'not representable as JSON' } }
  if (text === undefined) return null
  const bytes = Buffer.byteLength(text)
  return bytes > MAX_VALUE_BYTES ? { truncated: true, bytes } : value
}

export function boundRecord (r: ExecutionRecord): ExecutionRecord {
  r.trigger_output = bounded(r.trigger_output)
  r.response = bounded(r.response)
  r.node_inputs = Object.fromEntries(Object.entries(r.node_inputs).map(([k, v]) => [k, bounded(v)]))
  r.nodes = r.nodes.map(n => {
    const rec = n as { input?: unknown, output?: unknown }
    return { ...rec, input: bounded(rec.input), output: bounded(rec.output) }
  })
  return r
}
