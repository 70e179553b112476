/**
 * The REST (and, through the router, MCP) adapter over the operations: a resource's routes are
 * a table of entries (method, path, role, body schema, operation), mounted on the router here.
 *
 *   entry ── mount ──> router route ── invoke (role check, body check: once, for REST and MCP)
 *                                        └─ input(params, query, body) -> operation(deps, caller, input)
 *                                             └─ result -> reply (status, ETag of the record)
 *
 * Path parameters are typed from the path itself (`/clients/:clientId/profiles/:id` gives
 * `{ clientId: string, id: string }`), so an entry's input mapping cannot name one that the
 * path does not have.
 */
import type { Role } from '../auth/roles.js'
import type { Caller } from '../operations/types.js'
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
  ifMatch: number | undefined
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
}

/** One table entry, its types checked against each other (path, input, operation). */
export function op<D, P extends string, I, R> (entry: OperationRoute<D, P, I, R>): OperationRoute<D> {
  return entry as OperationRoute<D>
}

export function mountOperations<D> (router: Router, deps: D, table: ReadonlyArray<OperationRoute<D>>): void {
  for (const entry of table) {
    router.add(entry.method, entry.path, async ctx => {
      const input = entry.input({ params: ctx.params, query: ctx.query, body: ctx.body, ifMatch: ctx.ifMatch })
      return replyOf(entry, await entry.operation(deps, callerOf(ctx), input))
    }, { ...entry.options, role: entry.role, body: entry.body })
  }
}

function replyOf (entry: Pick<OperationRoute<unknown>, 'status' | 'etag'>, result: unknown): Reply {
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
