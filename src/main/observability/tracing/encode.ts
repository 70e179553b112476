/**
 * Finished span records to an OTLP ExportTraceServiceRequest body, with the
 * official encoder (@opentelemetry/otlp-transformer, protobuf or JSON). Records
 * are shaped as the SDK's ReadableSpan here, once per export batch, so the
 * request path never builds an SDK object. The encoder loads when tracing is configured, not at
 * start (it is a third of a second and about 15 MB that a service without tracing never uses).
 */
import { lazyRequire } from '../../lazy-require.js'
import type { Attributes, FinishedSpan, Span } from './span.js'

type Transformer = typeof import('@opentelemetry/otlp-transformer')
type ReadableSpans = Parameters<Transformer['ProtobufTraceSerializer']['serializeRequest']>[0]

const loadTransformer = lazyRequire<Transformer>('@opentelemetry/otlp-transformer')

/** What an exported span is: a gateway span, or a worker's node span with its trace id. */
export type ExportSpan = Span | (FinishedSpan & { traceId: string, sampled: true, state?: string })

const SCOPE = { name: 'gatehouse', version: '1' }

export function createEncoder (protocol: 'http/protobuf' | 'http/json', resourceAttributes: Attributes): (spans: ExportSpan[]) => Uint8Array {
  // One resource object for all spans: the encoder groups spans by resource identity.
  const resource = { attributes: resourceAttributes, asyncAttributesPending: false }
  const { JsonTraceSerializer, ProtobufTraceSerializer } = loadTransformer()
  const serializer = protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer
  return spans => serializer.serializeRequest(spans.map(s => readable(s, resource)) as unknown as ReadableSpans) ?? new Uint8Array(0)
}

function readable (s: ExportSpan, resource: object): object {
  const isLocal = 'spanId' in s
  const spanId = isLocal ? s.spanId : s.span_id
  const parentId = isLocal ? s.parentId : s.parent_id
  const traceState = s.state === undefined ? undefined : { serialize: () => s.state }
  const ctx = { traceId: s.traceId, spanId, traceFlags: 1, traceState }
  return {
    name: s.name,
    kind: s.kind,
    spanContext: () => ctx,
    parentSpanContext: parentId === undefined ? undefined : { traceId: s.traceId, spanId: parentId, traceFlags: 1, isRemote: isLocal ? s.remoteParent : false },
    startTime: hr(s.start),
    endTime: hr(s.end),
    duration: hr(s.end - s.start),
    status: s.message === undefined ? { code: s.status } : { code: s.status, message: s.message },
    attributes: s.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0
  }
}

/** Epoch ms (fractional) as OpenTelemetry's HrTime [seconds, nanoseconds]. */
function hr (ms: number): [number, number] {
  const s = Math.floor(ms / 1000)
  return [s, Math.round((ms - s * 1000) * 1e6)]
}
