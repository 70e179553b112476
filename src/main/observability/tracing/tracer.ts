/**
 * The tracer: null when no OTLP endpoint is set (then the request path pays one
 * null check and builds no span), else it starts spans under the sampler, hands
 * finished sampled spans to the export queue and renders its counters for
 * /metrics.
 *
 *   caller's traceparent ─parse─> sampler ─> Span (server) ─> children (access, backend, workflow run)
 *                                                 │ end()
 *                                                 ▼
 *                                      export queue (export.ts) ─> OTLP/HTTP collector
 */
import { newTraceId, parseTraceparent, type TraceContext } from '../../../common/trace-context.js'
import type { Config } from '../../config/config.js'
import type { Logger } from '../../logger.js'
import { createEncoder } from './encode.js'
import { createSpanExporter, type SpanExporter } from './export.js'
import { createSampler, type Sampler } from './sampler.js'
import { Span, nowMs, type Attributes, type FinishedSpan } from './span.js'

export interface Tracer {
  /** A span continuing `parent` (a caller's or a message's context: remote), or a new trace when null. */
  start (parent: TraceContext | null, name: string, kind: number, remote?: boolean, attributes?: Attributes): Span
  /** A server span from a request's `traceparent` / `tracestate` header values. */
  startFromHeaders (traceparent: string | null, tracestate: string | null, name: string, kind: number): Span
  /** A child of a local span (same trace, same sampling decision). */
  child (parent: Span, name: string, kind: number, attributes?: Attributes): Span
  /** Ends a span now (or at `end`); a sampled one is queued for export. */
  end (span: Span, end?: number): void
  /** Spans finished in a worker (node runs), under `trace`. */
  addFinished (trace: TraceContext, spans: FinishedSpan[]): void
  prometheus (): string
  shutdown (): Promise<void>
}

/** The export URL from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; '' when neither. */
export function tracesUrl (config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): string {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== '') return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT !== '') return config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '') + '/v1/traces'
  return ''
}

export function createTracer (config: Readonly<Config>, logger: Logger, version = '0.1.0'): Tracer | null {
  const url = tracesUrl(config)
  if (url === '') return null
  const exporter = createSpanExporter({
    url,
    protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: config.OTEL_EXPORTER_OTLP_HEADERS,
    timeoutMs: config.OTEL_EXPORTER_OTLP_TIMEOUT,
    scheduleDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
    maxQueue: config.OTEL_BSP_MAX_QUEUE_SIZE,
    maxBatch: config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    encode: createEncoder(config.OTEL_EXPORTER_OTLP_PROTOCOL, {
      'service.name': config.OTEL_SERVICE_NAME, 'service.version': version, 'telemetry.sdk.name': 'gatehouse', 'telemetry.sdk.language': 'nodejs'
    }),
    onFailure: message => { logger.warn({ url, error: message }, 'trace export failed; spans are being dropped until the collector answers') }
  })
  logger.info({ url, protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL, sampler: config.OTEL_TRACES_SAMPLER, ratio: config.OTEL_TRACES_SAMPLER_ARG }, 'tracing: exporting spans over OTLP/HTTP')
  return tracerOver(createSampler(config.OTEL_TRACES_SAMPLER, config.OTEL_TRACES_SAMPLER_ARG), exporter)
}

export function tracerOver (sample: Sampler, exporter: SpanExporter): Tracer {
  const start: Tracer['start'] = (parent, name, kind, remote = true, attributes) => {
    const traceId = parent?.trace_id ?? newTraceId()
    return new Span(traceId, parent?.span_id, sample(traceId, parent), parent?.state, parent !== null && remote, name, kind, nowMs(), attributes)
  }
  return {
    start,
    startFromHeaders (traceparent, tracestate, name, kind) {
      return start(traceparent === null ? null : parseTraceparent(traceparent, tracestate), name, kind)
    },
    child (parent, name, kind, attributes) {
      return new Span(parent.traceId, parent.spanId, parent.sampled, parent.state, false, name, kind, nowMs(), attributes)
    },
    end (span, end) {
      span.end = end ?? nowMs()
      if (span.sampled) exporter.push(span)
    },
    addFinished (trace, spans) {
      if (!trace.sampled) return
      for (const s of spans) exporter.push({ ...s, traceId: trace.trace_id, sampled: true, state: trace.state })
    },
    prometheus () {
      const s = exporter.stats
      return '# HELP gatehouse_tracing_spans_exported_total Spans the collector accepted.\n# TYPE gatehouse_tracing_spans_exported_total counter\n' +
        `gatehouse_tracing_spans_exported_total ${s.exported}\n` +
        '# HELP gatehouse_tracing_spans_dropped_total Spans dropped instead of exported: the queue was full (collector slow or down) or the export failed.\n# TYPE gatehouse_tracing_spans_dropped_total counter\n' +
        `gatehouse_tracing_spans_dropped_total{reason="queue_full"} ${s.queueFull}\ngatehouse_tracing_spans_dropped_total{reason="export_failed"} ${s.exportFailed}\n` +
        '# HELP gatehouse_tracing_queue_spans Spans waiting for export.\n# TYPE gatehouse_tracing_queue_spans gauge\n' +
        `gatehouse_tracing_queue_spans ${s.queued}\n`
    },
    shutdown: async () => { await exporter.shutdown() }
  }
}
