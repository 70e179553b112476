/**
 * The one way into a management operation, whatever the surface:
 *
 *   REST request ─┐                         ┌─ role check (the route's role)
 *                 ├─ invoke(route, caller, ─┼─ body check (the route's schema, every problem at once)
 *   MCP tool call ┘        input)           ├─ handler (domain: store, events, config reload)
 *                                           └─ settle (this instance serves the change)
 *
 * A caller is who asks (sub, role) and through what (`rest`, `mcp`, `assistant`); the input is
 * plain data (path parameters, query, body, If-Match). REST and MCP differ only in how they
 * read the input and render the result or the coded error; the role check (here, before a REST
 * body is even read) and the mapping of failures to coded errors (`managementError`) are the
 * same function for both.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError, forbidden, serviceUnavailable, toAppError } from '../../common/errors.js'
import { hasRole, type Role } from '../auth/roles.js'
import type { Logger } from '../logger.js'
import type { Caller, FrameSink } from '../operations/types.js'
import { isDatabaseUnavailable } from '../store/types.js'
import { checkBody, type Reply, type RequestContext, type Route } from './router.js'

export type { Caller, FrameSink, Source } from '../operations/types.js'

export interface OperationInput {
  params: Record<string, string>
  query: URLSearchParams
  body: unknown
  rawBody?: Buffer | null
  ifMatch?: number
}

export function checkRole (route: Route, role: Role | null): void {
  const need = route.opts.role ?? 'viewer'
  if (!hasRole(role, need)) {
    throw forbidden(`This action needs the ${need} role${role === null ? '; your token carries no known role' : `; you have ${role}`}.`)
  }
}

export interface InvokeOptions {
  req: IncomingMessage
  res: ServerResponse
  /** Set by surfaces that cannot hand the handler a response to stream into (MCP). */
  frames?: FrameSink
  settle?: () => Promise<void>
  /** Reads the body once the role is checked (REST: a refused caller never gets to send one). */
  readBody?: () => Promise<{ body: unknown, rawBody: Buffer | null }>
}

/**
 * Runs a route's operation for a caller. Returns the reply (undefined when a streaming handler
 * wrote the response itself) and the context the audit trail reads. Throws AppErrors.
 */
export async function invoke (route: Route, caller: Caller, input: OperationInput, opts: InvokeOptions, onContext?: (ctx: RequestContext) => void): Promise<Reply | undefined> {
  const ctx: RequestContext = {
    req: opts.req,
    res: opts.res,
    params: input.params,
    query: input.query,
    body: input.body,
    rawBody: input.rawBody ?? null,
    user: { sub: caller.sub, role: caller.role, exp: caller.exp },
    caller,
    frames: opts.frames,
    ifMatch: input.ifMatch
  }
  onContext?.(ctx)
  checkRole(route, caller.role)
  if (opts.readBody !== undefined) ({ body: ctx.body, rawBody: ctx.rawBody } = await opts.readBody())
  if (route.opts.raw !== true) ctx.body = checkBody(route, ctx.body)
  const reply = await route.handler(ctx)
  // A change is answered once this instance serves it (route table, access snapshot).
  if (reply !== undefined && route.method !== 'GET' && reply.status < 300 && opts.settle !== undefined) await opts.settle().catch(() => {})
  return reply
}

/**
 * Any failure of a management request or tool call as the coded error its surface renders: an
 * unreachable database is a 503 with Retry-After (and a warning), anything not coded a 500
 * (logged with its stack); AppErrors pass as they are.
 */
export function managementError (err: unknown, logger: Logger, context: Record<string, unknown>): AppError {
  if (err instanceof AppError) return err
  if (isDatabaseUnavailable(err)) {
    logger.warn({ err: (err as Error).message, ...context }, 'management request failed: database unavailable')
    return serviceUnavailable('The database is unavailable; retry shortly.', 5)
  }
  logger.error({ err, ...context }, 'management request failed')
  return toAppError(err)
}
