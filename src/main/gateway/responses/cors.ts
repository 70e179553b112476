/**
 * CORS for a collection's proxies (compiled per route when the configuration changes; a route
 * without `cors` has `route.cors === null` and pays nothing per request).
 *
 *   OPTIONS + Origin + Access-Control-Request-Method  ─> preflight(): answered here, 204, before
 *                                                         client authentication, no backend call
 *   any other request with Origin                     ─> actualHeaders(): added by writeHead to
 *                                                         every answer (backend's, gateway errors)
 *
 * A disallowed origin gets no Access-Control-* header (the browser then refuses the answer to the
 * page) and a debug line, never an error page: a request without a browser behind it is served.
 */
import type { CorsSettings } from '../../../common/types.js'
import type { GatewayExchange } from '../exchange.js'

export interface CompiledCors {
  anyOrigin: boolean
  exact: Set<string>
  patterns: RegExp[]
  credentials: boolean
  allowMethods: string
  /** null: the preflight's requested headers are allowed (echoed). */
  allowHeaders: string | null
  exposeHeaders: string | null
  maxAge: string | null
  /** Headers of every actual answer to an allowed origin when it is not echoed (`*` without credentials). */
  wildcard: Array<[string, string]> | null
}

export const CORS_DEFAULTS: Omit<CorsSettings, 'allow_origins'> = {
  allow_methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allow_headers: [],
  expose_headers: [],
  allow_credentials: false,
  max_age_s: null
}

/** `*`, or an origin whose first host label may be `*` (any one or more labels there). */
export const ORIGIN_PATTERN = '^(\\*|https?://(\\*\\.)?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?)$'

const headerToken = { type: 'string', pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$" }
/** The management API's and the export file's shape of a collection's `cors`. */
export const corsSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['allow_origins'],
  properties: {
    allow_origins: { type: 'array', minItems: 1, maxItems: 200, uniqueItems: true, items: { type: 'string', maxLength: 300, pattern: ORIGIN_PATTERN } },
    allow_methods: { type: 'array', maxItems: 10, uniqueItems: true, items: { type: 'string', enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', '*'] } },
    allow_headers: { type: 'array', maxItems: 100, uniqueItems: true, items: headerToken },
    expose_headers: { type: 'array', maxItems: 100, uniqueItems: true, items: headerToken },
    allow_credentials: { type: 'boolean' },
    max_age_s: { type: ['integer', 'null'], minimum: 0, maximum: 86_400 }
  }
}

/** A `cors` as sent, with the defaults of what was left out (so reads show what applies). */
export function withCorsDefaults (c: Partial<CorsSettings> & Pick<CorsSettings, 'allow_origins'>): CorsSettings {
  return { ...CORS_DEFAULTS, ...c }
}

export function compileCors (c: CorsSettings): CompiledCors {
  const s = withCorsDefaults(c)
  const anyOrigin = s.allow_origins.includes('*')
  const exact = new Set<string>()
  const patterns: RegExp[] = []
  for (const o of s.allow_origins) {
    if (o === '*') continue
    if (o.includes('*')) {
      // `https://*.example.org`: one or more labels where the star is, nothing else varies (not the port).
      const [scheme = '', rest] = o.split('://*')
      // Validation lets only this shape through; an older stored value says what is wrong.
      if (rest === undefined) throw new Error(`CORS origin pattern '${o}' must look like https://*.example.org`)
      patterns.push(new RegExp(`^${escape(scheme.toLowerCase())}://[a-z0-9-]+(\\.[a-z0-9-]+)*${escape(rest.toLowerCase())}$`))
    } else exact.add(o.toLowerCase())
  }
  const expose = s.expose_headers.length > 0 ? s.expose_headers.join(', ') : null
  return {
    anyOrigin,
    exact,
    patterns,
    credentials: s.allow_credentials,
    allowMethods: s.allow_methods.join(', '),
    allowHeaders: s.allow_headers.length > 0 ? s.allow_headers.join(', ') : null,
    exposeHeaders: expose,
    maxAge: s.max_age_s === null ? null : String(s.max_age_s),
    wildcard: anyOrigin && !s.allow_credentials
      ? [['access-control-allow-origin', '*'], ...(expose !== null ? [['access-control-expose-headers', expose] as [string, string]] : []), VARY_ORIGIN]
      : null
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const VARY_ORIGIN: [string, string] = ['vary', 'Origin']
const ONLY_VARY: Array<[string, string]> = [VARY_ORIGIN]
const VARY_PREFLIGHT: [string, string] = ['vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers']

export function originAllowed (c: CompiledCors, origin: string): boolean {
  if (c.anyOrigin) return true
  const o = origin.toLowerCase()
  if (c.exact.has(o)) return true
  for (let i = 0; i < c.patterns.length; i++) if (c.patterns[i]!.test(o)) return true // i < length
  return false
}

/** The CORS headers of an actual answer (always `Vary: Origin`; the allow headers for an allowed origin only). */
export function actualHeaders (c: CompiledCors, origin: string | null): Array<[string, string]> {
  if (origin === null || !originAllowed(c, origin)) return ONLY_VARY
  if (c.wildcard !== null) return c.wildcard
  const h: Array<[string, string]> = [['access-control-allow-origin', origin]]
  if (c.credentials) h.push(['access-control-allow-credentials', 'true'])
  if (c.exposeHeaders !== null) h.push(['access-control-expose-headers', c.exposeHeaders])
  h.push(VARY_ORIGIN)
  return h
}

/** The headers of a preflight's 204, or only Vary for a disallowed origin. */
export function preflightHeaders (c: CompiledCors, origin: string, requestedHeaders: string | null): Array<[string, string]> | null {
  if (!originAllowed(c, origin)) return null
  const h: Array<[string, string]> = [['access-control-allow-origin', c.anyOrigin && !c.credentials ? '*' : origin]]
  if (c.credentials) h.push(['access-control-allow-credentials', 'true'])
  h.push(['access-control-allow-methods', c.allowMethods])
  const headers = c.allowHeaders ?? requestedHeaders
  if (headers !== null && headers !== '') h.push(['access-control-allow-headers', headers])
  if (c.maxAge !== null) h.push(['access-control-max-age', c.maxAge])
  h.push(VARY_PREFLIGHT)
  return h
}

export const PREFLIGHT_VARY_ONLY: Array<[string, string]> = [VARY_PREFLIGHT]

/**
 * A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) to a route of a
 * collection with `cors`: answered 204 here. False when it is not one (the request goes on as any).
 */
export function answerPreflight (x: GatewayExchange, segments: string[]): boolean {
  const m = x.ctx.table.match(x.acrMethod!, segments)
  if (m === null || 'allow' in m || m.route.cors === null) return false
  const route = m.route
  x.match = m
  const headers = preflightHeaders(route.cors!, x.origin!, x.acrHeaders)
  if (headers === null) x.ctx.logger.debug({ request_id: x.rid, origin: x.origin, route: route.name }, 'CORS preflight from an origin the collection does not allow')
  x.status = 204
  x.res.cork(() => {
    x.writeHead(204, 'No Content', headers ?? PREFLIGHT_VARY_ONLY, null)
    x.res.endWithoutBody()
  })
  x.finish(route.name)
  return true
}

/** Sets the CORS headers every answer to this request carries (the route has `cors`). */
export function applyCors (x: GatewayExchange, c: CompiledCors): void {
  const h = actualHeaders(c, x.origin)
  if (h === ONLY_VARY && x.origin !== null) x.ctx.logger.debug({ request_id: x.rid, origin: x.origin, route: x.match!.route.name }, 'CORS request from an origin the collection does not allow')
  x.corsHeaders = h
}
