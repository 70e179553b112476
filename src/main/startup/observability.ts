/**
 * Metrics, tracing and the request log's writer, started right after the store: the workflow
 * runner traces its runs, the gateway observes every request, and the other subsystems add
 * their own metric sources.
 */
import type { Config } from '../config/config.js'
import type { Logger } from '../logger.js'
import { Metrics } from '../observability/metrics.js'
import { createTracer, type Tracer } from '../observability/tracing/tracer.js'
import { RequestLogWriter } from '../observability/request-log.js'
import type { RequestRecord } from '../store/request-record.js'
import type { RequestLogStore } from '../store/request-logs.js'
import type { ConfigConsumer } from './config-reload.js'
import type { Subsystem } from './subsystem.js'

export interface ObservabilitySubsystem extends Subsystem {
  metrics: Metrics
  /** Null without an OTLP endpoint: nothing is traced and nothing is built per request. */
  tracer: Tracer | null
  /** Called once per gateway request: counted in the metrics, appended to the request log. */
  observe (r: RequestRecord): void
  /** Per-route metric labels follow the served configuration. */
  consumer: ConfigConsumer
}

export function startObservability (config: Readonly<Config>, logger: Logger, requestLogs: RequestLogStore): ObservabilitySubsystem {
  const metrics = new Metrics()
  const tracer = createTracer(config, logger)
  if (tracer !== null) metrics.addSource(() => tracer.prometheus())
  const requestLog = config.REQUEST_LOG_RETENTION_HOURS > 0
    ? new RequestLogWriter({ sink: async records => { await requestLogs.insert(records) }, logger })
    : null
  if (requestLog !== null) metrics.addSource(() => requestLog.prometheus().join('\n') + '\n')
  // Request log retention: prune hourly (and once at start).
  const prune = () => {
    if (requestLog === null) return
    requestLogs.prune(new Date(Date.now() - config.REQUEST_LOG_RETENTION_HOURS * 3_600_000))
      .catch((err: Error) => logger.warn({ err: err.message }, 'request log pruning failed'))
  }
  prune()
  const pruneTimer = setInterval(prune, 3_600_000)
  pruneTimer.unref()

  return {
    metrics,
    tracer,
    observe: r => { metrics.record(r); requestLog?.append(r) },
    consumer: { name: 'metrics', apply: ({ full, delta, view }) => { metrics.setRoutes(view, full ? undefined : delta.removedProxies) } },
    async close () {
      clearInterval(pruneTimer)
      await requestLog?.close().catch(() => {})
      await tracer?.shutdown()
    }
  }
}
