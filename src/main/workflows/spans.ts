/**
 * A workflow run's span, on the main thread: the parent of its node runs' spans
 * (made in the worker, returned with the result). A gateway run sits under the
 * request's SERVER span; a trigger's run starts a trace, or continues a Kafka
 * message's (CONSUMER).
 *
 *   [SERVER GET /orders] ─> [workflow <id>] ─┬─> [http_request_node fetch] ─> backend's spans
 *   [cron / imap / kafka] ─> [workflow <id>] ─┴─> [set_node shape] …
 *   [management API: test, manual, replay…] ─> [workflow <id>] (a root, trigger manual)
 */
import type { ExecutionResult } from '../../workers/engine/types.js'
import { KIND, type Span } from '../observability/tracing/span.js'
import type { RunRequest, RunTrace } from './runner.js'
import type { Tracer } from '../observability/tracing/tracer.js'

/** A run started from the management API (test, partial, single-node, manual, replay): a trace of its own. */
export const MANUAL_TRACE: RunTrace = Object.freeze({ parent: null, trigger: 'manual' })

export function startRunSpan (tracer: Tracer, req: RunRequest, executionId: string): Span {
  const t = req.trace!
  const span = tracer.start(t.parent, `workflow ${req.proxy.workflow_id}`, t.kind === 'consumer' ? KIND.consumer : KIND.internal, t.remote === true)
  if (span.sampled) {
    const a = span.attributes
    a['gatehouse.workflow.id'] = req.proxy.workflow_id
    a['gatehouse.proxy_id'] = req.proxy.id
    a['gatehouse.execution.id'] = executionId
    a['gatehouse.execution.mode'] = req.mode
    if (t.trigger !== undefined) a['gatehouse.execution.trigger'] = t.trigger
  }
  return span
}

/** Ends the run's span with its status; its node spans go out with it. `err`: the run never ran (refused, failed to start). */
export function endRunSpan (tracer: Tracer, span: Span, result: ExecutionResult | null, err?: unknown): void {
  if (span.sampled) {
    if (result !== null) {
      span.attributes['gatehouse.execution.status'] = result.status
      if (result.status !== 'success') span.fail(result.error?.message ?? result.status)
      if (result.spans !== undefined) tracer.addFinished(span.context(), result.spans)
    } else span.fail(err instanceof Error ? err.message : String(err))
  }
  tracer.end(span)
}
