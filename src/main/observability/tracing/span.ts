/**
 * The lean span record the gateway keeps per traced operation: plain fields,
 * times as epoch milliseconds (fractional), attributes only when sampled.
 * Turned into OpenTelemetry's ReadableSpan shape only at export time (export.ts),
 * off the request path.
 */
import { newSpanId, type FinishedSpan, type TraceContext } from '../../../common/trace-context.js'

export type { FinishedSpan }

/** OpenTelemetry's SpanKind values (INTERNAL 0, SERVER 1, CLIENT 2, PRODUCER 3, CONSUMER 4). */
export const KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const
/** OpenTelemetry's SpanStatusCode values. */
export const STATUS = { unset: 0, ok: 1, error: 2 } as const

export type AttributeValue = string | number | boolean
export type Attributes = Record<string, AttributeValue>

/** Epoch ms with sub-ms precision: performance.now() on the wall clock's origin. */
export const nowMs = (): number => performance.timeOrigin + performance.now()

export class Span {
  end = 0
  status: number = STATUS.unset
  message: string | undefined = undefined
  attributes: Attributes
  readonly spanId = newSpanId()

  constructor (
    readonly traceId: string,
    readonly parentId: string | undefined,
    readonly sampled: boolean,
    readonly state: string | undefined,
    /** The parent came from another process (a caller's traceparent, a Kafka message). */
    readonly remoteParent: boolean,
    public name: string,
    readonly kind: number,
    readonly start: number = nowMs(),
    attributes?: Attributes
  ) {
    this.attributes = attributes ?? {}
  }

  /** This span as the parent of work elsewhere (a backend, a worker, a sub-span). */
  context (): TraceContext {
    const c: TraceContext = { trace_id: this.traceId, span_id: this.spanId, sampled: this.sampled }
    if (this.state !== undefined) c.state = this.state
    return c
  }

  fail (message: string | undefined): void {
    this.status = STATUS.error
    this.message = message
  }
}

