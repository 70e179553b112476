/**
 * Workflow target: a proxy with an enabled workflow answers from the workflow
 * (run in the worker pool) instead of a backend. This stage turns the request
 * into the http_trigger's output and the workflow's answer into the response.
 */
import { AppError, badRequest, serviceUnavailable } from '../../common/errors.js'
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../common/json-depth.js'
import type { GatewayExchange } from './exchange.js'
import type { WorkflowTrigger } from './index.js'
import { sendWhole, type EncodedMemo } from './responses/whole-answer.js'

const GATEWAY_AUTH = new Set(['authorization', 'x-client-id', 'x-profile-id'])

export function runWorkflowTarget (x: GatewayExchange, query: string, body: Buffer | null): void {
  const run = x.ctx.workflows
  if (run === undefined) { x.fail(serviceUnavailable('Workflows are not available on this instance.')); return }
  const route = x.match!.route
  x.upstreamStart = performance.now()
  let trigger: WorkflowTrigger
  try { trigger = triggerOf(x, query, body) } catch (err) { x.fail(err as AppError); return }
  run(route, trigger, x.span === null ? null : x.span.context()).then(answer => {
    if (x.closed) return
    x.status = answer.status
    const isText = typeof answer.body === 'string'
    const payload = answer.body === null || answer.body === undefined ? '' : isText ? answer.body as string : JSON.stringify(answer.body)
    const headers: Array<[string, string]> = Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), String(v)])
    if (payload !== '' && !headers.some(h => h[0] === 'content-type')) headers.push(['content-type', isText ? 'text/plain; charset=utf-8' : 'application/json'])
    const body = Buffer.from(payload)
    sendWhole(x, { status: answer.status, statusText: '', headers, body }, Math.round(performance.now() - x.upstreamStart), keep(x, answer.status, headers, body))
  }, (err: unknown) => {
    if (!(err instanceof AppError)) x.ctx.logger.error({ err, request_id: x.rid }, 'workflow run failed')
    const e = err instanceof AppError ? err : new AppError(500, 'workflow_failed', 'The workflow failed; see its execution record.')
    // Refusals (a full queue, a proxy being reconfigured) are not failures of the run.
    // A failed run's caller got a generic message: its details (execution id, node, error) go to this line.
    if (e.status >= 500 && e.status !== 503) {
      x.warnFailure(e.status, e.status === 504 ? 'workflow timeout' : 'workflow failed', { code: e.code, error: e.message, ...('internal' in e ? e.internal as object : {}) })
    }
    x.cacheSink?.decline()
    x.fail(e)
  })

}

/** A cached proxy's workflow answer goes to its cache like a backend's. */
function keep (x: GatewayExchange, status: number, headers: Array<[string, string]>, body: Buffer): EncodedMemo | null {
  const sink = x.cacheSink
  if (sink === null) return null
  const h = { status, statusText: '', headers, keepAlive: true }
  if (sink.accepts(h, 'length', body.length) < 0) { sink.decline(); return null }
  return sink.store(h, body)
}

/** The http_trigger's output: the request as the workflow sees it (without the gateway-auth headers). */
function triggerOf (x: GatewayExchange, q: string, body: Buffer | null): WorkflowTrigger {
  const { route, params } = x.match!
  const headers: Record<string, string> = {}
  for (const [k, v] of x.headers) if (!GATEWAY_AUTH.has(k)) headers[k] = v
  const sp = new URLSearchParams(q)
  const queryObj: Record<string, string | string[]> = {}
  for (const k of new Set(sp.keys())) { const all = sp.getAll(k); queryObj[k] = all.length === 1 ? all[0]! : all }
  let parsed: unknown = null
  if (body !== null && body.length > 0) {
    const text = body.toString('utf8')
    const json = /json/i.test(x.contentType ?? '')
    if (json && jsonDepthExceeds(text)) throw badRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`)
    parsed = json ? safeJson(text) : text
  }
  return {
    request: {
      method: x.method, path: x.url, query: queryObj, headers, body: parsed,
      path_params: Object.fromEntries(route.paramNames.map((n, i) => [n, safeDecode(params[i] ?? '')]))
    }
  }
}

function safeJson (text: string): unknown {
  try { return JSON.parse(text) } catch { return text }
}

function safeDecode (s: string): string {
  try { return decodeURIComponent(s) } catch { return s }
}
