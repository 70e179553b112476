/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent`
 * header parsed and written, and random ids. Pure: used by the main thread
 * (gateway spans) and by workers (node spans, outbound http_request_node calls).
 *
 *   traceparent: 00-<trace-id 32 hex>-<parent-id 16 hex>-<flags 2 hex>   (01 = sampled)
 */
import { randomFillSync } from 'node:crypto'

/** A span's identity as it travels: between threads, in a task, in a header. */
export interface TraceContext {
  trace_id: string
  span_id: string
  sampled: boolean
  /** The caller's `tracestate`, passed on unchanged (vendor data we do not read). */
  state?: string
}

/** A span that ran elsewhere (a worker's node run) and comes back finished, as plain data (times in epoch ms). */
export interface FinishedSpan {
  span_id: string
  parent_id: string
  name: string
  /** OpenTelemetry's SpanKind (0 internal). */
  kind: number
  start: number
  end: number
  /** OpenTelemetry's status code: 0 unset, 2 error. */
  status: number
  message?: string
  attributes: Record<string, string | number | boolean>
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '00000000000000000000000000000000'
const ZERO_SPAN = '0000000000000000'

/** The caller's context, or null when absent or malformed (then a new trace starts, as the spec says). */
export function parseTraceparent (value: string | null | undefined, state?: string | null): TraceContext | null {
  if (value === null || value === undefined || value.length < 55) return null
  const m = TRACEPARENT.exec(value.trim())
  if (m === null) return null
  const version = m[1]
  // Version ff is invalid; version 00 has nothing after the flags; later versions may append fields.
  if (version === 'ff' || (version === '00' && m[5] !== undefined)) return null
  if (m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return null
  // Groups 2-4 are not optional: they are there whenever TRACEPARENT matched.
  const ctx: TraceContext = { trace_id: m[2]!, span_id: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 }
  if (state !== null && state !== undefined && state !== '' && state.length <= 512) ctx.state = state
  return ctx
}

export function formatTraceparent (traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`
}

// Ids come from one pre-filled random pool: a crypto call per 512 ids instead of one per id.
const POOL = Buffer.alloc(4096)
let offset = POOL.length

function randomHex (bytes: number): string {
  if (offset + bytes > POOL.length) { randomFillSync(POOL); offset = 0 }
  const s = POOL.toString('hex', offset, offset + bytes)
  offset += bytes
  return s
}

export function newTraceId (): string {
  const id = randomHex(16)
  return id === ZERO_TRACE ? newTraceId() : id
}

export function newSpanId (): string {
  const id = randomHex(8)
  return id === ZERO_SPAN ? newSpanId() : id
}
