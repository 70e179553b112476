/**
 * The REST (and, through the router, MCP) adapter over the operations: a resource's routes are
 * a table of entries (method, path, role, body schema, operation), mounted on the router here.
 *
 *   entry ── mount ──> router route ── invoke (role check, body check: once, for REST and MCP)
 *                                        └─ input(params, query, body) -> operation(deps, caller, input)
 *                                             └─ result -> reply (status, ETag of the record)
 *
 * A streaming entry (`stream`) hands its operation a frame sink, a signal that fires when the
 * caller goes away and an `accepted` call (the stream is under way before its first frame): over MCP the sink is the tool call's progress notifications and the result is
 * the answer; over REST the frames go out as Server-Sent Events and the result, if the entry names
 * a last frame for it, ends the stream.
 *
 * Path parameters are typed from the path itself (`/clients/:clientId/profiles/:id` gives
 * `{ clientId: string, id: string }`), so an entry's input mapping cannot name one that the
 * path does not have.
 */
import type { ServerResponse } from 'node:http'
import type { Role } from '../auth/roles.js'
import type { Caller, FrameSink } from '../operations/types.js'
import type { Reply, RequestContext, RouteOptions, Router } from './router.js'
import { etag } from './validation.js'

type ParamNames<P extends string> =
  P extends `${string}:${infer Name}/${infer Rest}` ? Name | ParamNames<`/${Rest}`>
    : P extends `${string}:${infer Name}` ? Name : never

export type PathParams<P extends string> = { readonly [K in ParamNames<P>]: string }

/** What an entry's input mapping reads: typed path parameters and the checked request. */
export interface RouteInput<P extends string> {
  params: PathParams<P>
  query: URLSearchParams
  /** The body, already checked against the entry's schema (undefined when it has none). */
  body: any
  /** A `raw` entry's body as it came (an upload), else null. */
  raw: Buffer | null
  /** The request's Content-Type as sent ('' when absent): what the raw body is. */
  contentType: string
  ifMatch: number | undefined
  /** A streaming entry's frame sink (SSE over REST, progress notifications over MCP); a no-op for other entries. */
  frames: FrameSink
  /** Aborts when the caller goes away (its connection closed). */
  closed: AbortSignal
  /**
   * The stream is under way before its first frame (a wait that may stay silent): over REST the
   * SSE head goes out now; otherwise it goes with the first frame, so a refusal before any frame
   * is still a plain error answer. A no-op elsewhere.
   */
  accepted: () => void
}

/** How a streaming entry's result ends a REST stream. */
export interface StreamEntry<R = any> {
  /** The frame that ends a REST stream with the result; without it the result is what other surfaces answer. */
  last?: (result: R) => { event: string, data: unknown }
}

export interface OperationRoute<D, P extends string = string, I = any, R = any> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: P
  /** Default viewer. */
  role?: Role
  /** JSON Schema the body must satisfy. */
  body?: Record<string, unknown>
  /** The router's other options (read-only fields, field rules, audit naming). */
  options?: Omit<RouteOptions, 'role' | 'body' | 'public'>
  input: (r: RouteInput<P>) => I
  operation: (deps: D, caller: Caller, input: I) => Promise<R>
  /** Status of a success: 200 unless named; 204 answers no body. */
  status?: 200 | 201 | 204
  /** The answer carries the record's version (`result.version`) as its ETag. */
  etag?: boolean
  /** The answer when it is not the result itself (a file with its Content-Disposition); `status` and `etag` then do not apply. */
  reply?: (result: R) => Reply
  /** The operation streams frames (see StreamEntry). */
  stream?: StreamEntry<R>
}

/** One table entry, its types checked against each other (path, input, operation). */
export function op<D, P extends string, I, R> (entry: OperationRoute<D, P, I, R>): OperationRoute<D> {
  return entry as OperationRoute<D>
}

export function mountOperations<D> (router: Router, deps: D, table: ReadonlyArray<OperationRoute<D>>): void {
  for (const entry of table) {
    router.add(entry.method, entry.path, async ctx => {
      const route = { params: ctx.params, query: ctx.query, body: ctx.body, raw: ctx.rawBody, contentType: ctx.req.headers['content-type'] ?? '', ifMatch: ctx.ifMatch }
      const stream = entry.stream
      if (stream === undefined) return replyOf(entry, await entry.operation(deps, callerOf(ctx), entry.input({ ...route, frames: noFrames, closed: NEVER, accepted: noop })))
      const closed = new AbortController()
      ctx.res.on('close', () => { closed.abort() })
      if (ctx.frames !== undefined) {
        // A surface with its own stream (MCP progress): frames go there, the result is the answer.
        return replyOf(entry, await entry.operation(deps, callerOf(ctx), entry.input({ ...route, frames: ctx.frames, closed: closed.signal, accepted: noop })))
      }
      const res = ctx.res
      const send = sseSink(res)
      const accepted = (): void => { if (!res.headersSent && !res.destroyed) openStream(res) }
      const result = await entry.operation(deps, callerOf(ctx), entry.input({ ...route, frames: send, closed: closed.signal, accepted }))
      const last = stream.last?.(result)
      if (last !== undefined) send(last.event, last.data)
      res.end()
      return undefined
    }, { ...entry.options, role: entry.role, body: entry.body })
  }
}

const noop = (): void => {}
const noFrames: FrameSink = noop
const NEVER = new AbortController().signal

/** Frames as Server-Sent Events; the head goes out with the first one unless already sent. */
function sseSink (res: ServerResponse): FrameSink {
  return (event, data) => {
    if (res.destroyed) return
    if (!res.headersSent) openStream(res)
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
}

function openStream (res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
}

function replyOf (entry: Pick<OperationRoute<unknown>, 'status' | 'etag' | 'reply'>, result: unknown): Reply {
  if (entry.reply !== undefined) return entry.reply(result)
  const status = entry.status ?? 200
  if (status === 204) return { status }
  const version = (result as { version?: number }).version
  return { status, body: result, ...(entry.etag === true && version !== undefined ? { headers: etag(version) } : {}) }
}

/** The caller `invoke` put on the context (every operation route needs a role, so there is one). */
export function callerOf (ctx: RequestContext): Caller {
  if (ctx.caller === undefined) throw new Error('an operation route ran without a caller')
  return ctx.caller
}
