/**
 * A small router for the management listener. Modules register routes with a
 * role and an optional JSON Schema for the body; the router authenticates,
 * parses and validates before the handler runs, and renders every error in
 * the CONVENTIONS.md shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ValidateFunction } from 'ajv'
import { methodNotAllowed, notFound, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { ajv, ajvDetails, compileOnFirstUse } from '../validation/ajv.js'
import type { Role } from '../auth/roles.js'
import type { User } from '../auth/verifier.js'
import type { Caller, FrameSink } from './operation.js'

export interface RequestContext {
  req: IncomingMessage
  res: ServerResponse
  params: Record<string, string>
  query: URLSearchParams
  body: any
  rawBody: Buffer | null
  user: User | null
  /** Who asks and through which surface (absent on public routes). */
  caller?: Caller
  /** Where a streaming operation sends its frames when the surface is not an SSE response (MCP progress). */
  frames?: FrameSink
  /** The version named by If-Match, when sent (`*` means none). */
  ifMatch: number | undefined
}

export interface Reply { status: number, body?: unknown, headers?: Record<string, string> }

/** A handler returns a reply, or nothing when it wrote the response itself (SSE, MCP). */
export type Handler = (ctx: RequestContext) => Promise<Reply | undefined>

export interface RouteOptions {
  role?: Role
  public?: boolean
  /** JSON Schema the parsed body must satisfy. */
  body?: Record<string, unknown>
  /**
   * Also accept the bearer token as `?access_token=` (for the event stream: a browser's
   * EventSource cannot send headers). The Authorization header wins when both are sent.
   */
  queryToken?: boolean
  /** Hand the body over unparsed (e.g. multipart uploads). */
  raw?: boolean
  maxBodyBytes?: number
  /**
   * Fields of the record that a body may carry but that cannot be set (a client sending back
   * what it read): dropped before validation. `id`, `version`, `created_at`, `updated_at` always are.
   */
  readOnly?: readonly string[]
  /** Audit trail: the resource kind and action of a change when the path does not say them; false: not audited as a change. */
  audit?: false | { kind?: string, action?: string }
  /** Rules beyond the schema (path syntax, URLs), reported together with the schema's problems. */
  fieldProblems?: (body: Record<string, unknown>) => ErrorDetail[]
}

export interface Route { method: string, segments: string[], handler: Handler, opts: RouteOptions, validate: ValidateFunction | null, readOnly: readonly string[] }

const RECORD_FIELDS = ['id', 'version', 'created_at', 'updated_at']

/**
 * Validates a parsed body in place (ajv fills defaults into it). A missing body counts as `{}`,
 * so handlers always get an object; read-only record fields are dropped first.
 */
export function checkBody (route: Route, body: unknown): unknown {
  if (route.validate === null) return body
  const value = body ?? {}
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value)
  if (isObject) for (const f of route.readOnly) delete (value as Record<string, unknown>)[f]
  // Every problem of the body at once: the schema's, then the field rules on what is there.
  const details = route.validate(value) ? [] : ajvDetails(route.validate.errors)
  if (isObject && route.opts.fieldProblems !== undefined) {
    const seen = new Set(details.map(d => d.field))
    for (const d of route.opts.fieldProblems(value as Record<string, unknown>)) if (!seen.has(d.field)) details.push(d)
  }
  if (details.length > 0) throw validationFailed(`The request body is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  return value
}

export class Router {
  readonly routes: Route[] = []

  add (method: string, pattern: string, handler: Handler, opts: RouteOptions = {}): void {
    const validate = opts.body === undefined ? null : compileOnFirstUse(ajv, opts.body)
    const declared = (opts.body?.properties ?? {}) as Record<string, unknown>
    const readOnly = [...RECORD_FIELDS, ...opts.readOnly ?? []].filter(f => !(f in declared))
    this.routes.push({ method: method.toUpperCase(), segments: pattern.split('/').filter(Boolean), handler, opts, validate, readOnly: validate === null ? [] : readOnly })
  }

  /**
   * Finds the route for a path; throws 404 or 405 (with Allow) when there is none. Among the
   * routes of the method that match, a static segment beats a parameter at the first place they
   * differ (`/collections/export` before `/collections/:id`), so registration order does not matter.
   */
  find (method: string, pathname: string): { route: Route, params: Record<string, string> } {
    const parts = pathname.split('/').filter(Boolean)
    const allowed: string[] = []
    let best: { route: Route, params: Record<string, string> } | null = null
    for (const route of this.routes) {
      const params = match(route.segments, parts)
      if (params === null) continue
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
        if (best === null || moreStatic(route.segments, best.route.segments)) best = { route, params }
      } else allowed.push(route.method)
    }
    if (best !== null) return best
    if (allowed.length > 0) throw methodNotAllowed([...new Set(allowed)])
    throw notFound(`No management route matches ${method} ${pathname}.`)
  }
}

/** Whether `a` has a static segment where `b` first has a parameter (both match the same path). */
function moreStatic (a: string[], b: string[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const pa = a[i]?.startsWith(':') === true
    const pb = b[i]?.startsWith(':') === true
    if (pa !== pb) return pb
  }
  return false
}

function match (segments: string[], parts: string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i] ?? ''
    const part = parts[i] ?? ''
    if (s.startsWith(':')) {
      try { params[s.slice(1)] = decodeURIComponent(part) } catch { return null }
    } else if (s !== part) return null
  }
  return params
}
