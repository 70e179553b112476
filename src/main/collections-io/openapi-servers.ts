/**
 * The collection part of an OpenAPI import: name, base path and backend URL, from the
 * caller's options first, then the document's `servers` and `info`.
 *
 *   servers[0].url = https://api.example.com/v2   →  upstream_url https://api.example.com/v2
 *                                                    base_path    /v2
 *   servers[0].url = /v3 (relative)                →  base_path /v3, upstream_url required
 */
import { validationFailed, type ErrorDetail } from '../../common/errors.js'
import type { ImportedCollection, OpenApiImportOptions } from './openapi-import.js'
import { warn, type DerefContext } from './schema-deref.js'
import { isObject, type JsonObject } from './schema-walk.js'

export function collectionFromDocument (doc: JsonObject, opts: OpenApiImportOptions, ctx: DerefContext): ImportedCollection {
  const info = doc.info as JsonObject
  const name = (opts.name ?? String(info.title)).trim()
  const servers = (Array.isArray(doc.servers) ? doc.servers : []).map(serverUrl).filter((u): u is string => u !== undefined)
  const absolute = servers.find(u => /^https?:\/\//i.test(u))
  const details: ErrorDetail[] = []

  let basePath = opts.base_path
  if (basePath !== undefined && !/^\/[^\s?#]*$/.test(basePath)) {
    details.push({ field: 'base_path', message: "must start with '/' and contain no spaces, '?' or '#'" })
  }
  basePath ??= serverPath(servers[0]) ?? `/${slugify(name)}`

  let upstream = opts.upstream_url
  if (upstream !== undefined && !isHttpUrl(upstream)) {
    details.push({ field: 'upstream_url', message: 'must be an absolute http:// or https:// URL' })
  }
  upstream ??= absolute
  if (upstream === undefined) {
    details.push({
      field: 'upstream_url',
      message: servers.length > 0
        ? `is required: the document's server URL '${servers[0]}' is relative, so the backend address is unknown`
        : 'is required: the document lists no servers, so the backend address is unknown'
    })
  }
  if (details.length > 0) {
    throw validationFailed(`The collection cannot be created from this document: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  }
  if (servers.length > 1) warn(ctx, `servers: ${servers.length} servers are listed; '${upstream}' is used as the backend.`)
  return {
    name,
    description: typeof info.description === 'string' ? info.description.trim() : '',
    base_path: trimSlash(basePath),
    upstream_url: trimSlash(upstream as string),
    status: 'active',
    headers: [],
    auth_required: true
  }
}

/** A server's URL with its variables replaced by their defaults. */
function serverUrl (server: unknown): string | undefined {
  if (!isObject(server) || typeof server.url !== 'string') return undefined
  const vars = isObject(server.variables) ? server.variables : {}
  return server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const v = vars[name]
    return isObject(v) && typeof v.default === 'string' ? v.default : whole
  }).trim()
}

function serverPath (url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  let path: string
  try { path = new URL(url, 'http://relative.invalid').pathname } catch { return undefined }
  path = trimSlash(decodeSafe(path))
  return path === '/' || /[\s{}]/.test(path) ? undefined : path
}

const decodeSafe = (s: string): string => { try { return decodeURI(s) } catch { return s } }
const trimSlash = (s: string): string => s.length > 1 ? s.replace(/\/+$/, '') || '/' : s

function isHttpUrl (s: string): boolean {
  try {
    const u = new URL(s)
    return u.protocol === 'http:' || u.protocol === 'https:'
  } catch { return false }
}

/** `Swagger Petstore - OpenAPI 3.0` → `swagger-petstore-openapi-3-0`. */
export function slugify (text: string): string {
  const slug = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64).replace(/-+$/, '')
  return slug === '' ? 'api' : slug
}
