/**
 * The developer portal on the gateway listener, under the fixed prefix /portal/:
 * the built portal app, its catalogue (published proxies of active collections,
 * grouped by collection: what the gateway serves, never drafts) and each
 * collection's OpenAPI document. The HTTP layer matches the '/portal'
 * prefix before the gateway's catch-all, so gateway traffic pays nothing for it.
 *
 *   GET /portal/                        the portal page
 *   GET /portal/catalogue.json          {collections: [{…, proxies: [...]}]}
 *   GET /portal/openapi/<id>.json       OpenAPI 3.1 of one collection (download)
 */
import type { Collection, Proxy } from '../../common/types.js'
import type { RouteRegistrar } from '../gateway/http/types.js'
import { toOpenApi } from '../collections-io/openapi-export.js'
import type { RoutingView } from '../routes/reloader.js'
import { PORTAL_CSP } from './csp.js'
import type { StaticFiles } from './static-files.js'

export interface Portal {
  /** Called with every route table the gateway gets; documents are rebuilt on the next request. */
  /** The served configuration changed; the catalogue and documents are rebuilt when next asked for. */
  setRoutes (view: Pick<RoutingView, 'collections' | 'proxies'>): void
  /** Registers the /portal routes on the gateway app (nothing when the portal was not built). */
  attach (app: RouteRegistrar): void
}

const PREFIX = '/portal'
const JSON_TYPE = 'application/json; charset=utf-8'

export function createPortal (files: StaticFiles): Portal {
  let routes: Pick<RoutingView, 'collections' | 'proxies'> = { collections: () => [], proxies: () => [] }
  let catalogue: string | null = null
  const openapi = new Map<string, string>()

  // Published proxies by collection, grouped once per configuration change (not per collection).
  let grouped: Map<string, Proxy[]> | null = null
  const published = (c: Collection): Proxy[] => {
    if (grouped === null) {
      grouped = new Map()
      for (const p of routes.proxies()) {
        if (p.status !== 'published') continue
        let list = grouped.get(p.collection_id)
        if (list === undefined) grouped.set(p.collection_id, list = [])
        list.push(p)
      }
    }
    return grouped.get(c.id) ?? []
  }
  const visible = () => routes.collections().filter(c => c.status === 'active' && published(c).length > 0)
  const buildCatalogue = () => JSON.stringify({
    collections: visible().map(c => ({
      id: c.id,
      name: c.name,
      description: c.description,
      base_path: c.base_path,
      auth_required: c.auth_required,
      openapi_url: `${PREFIX}/openapi/${encodeURIComponent(c.id)}.json`,
      proxies: published(c).map(p => ({
        id: p.id,
        name: p.name,
        description: p.description,
        methods: p.methods,
        path: p.path,
        parameters: p.parameters,
        request_schema: p.request_schema,
        response_schema: p.response_schema,
        streaming: p.streaming
      }))
    }))
  })
  const document = (id: string): string | null => {
    const hit = openapi.get(id)
    if (hit !== undefined) return hit
    const c = visible().find(x => x.id === id)
    if (c === undefined) return null
    const text = JSON.stringify(toOpenApi(c, published(c), { version: '3.1' }), null, 2)
    openapi.set(id, text)
    return text
  }

  return {
    setRoutes (view) { routes = view; grouped = null; catalogue = null; openapi.clear() },
    attach (app) {
      if (!files.built) return
      app.get(PREFIX, res => { res.writeStatus('301 Moved Permanently').writeHeader('location', `${PREFIX}/`).end() })
      app.get(`${PREFIX}/*`, (res, req) => {
        const path = req.getUrl().slice(PREFIX.length)
        if (path === '/catalogue.json') {
          catalogue ??= buildCatalogue()
          res.writeHeader('content-type', JSON_TYPE).writeHeader('cache-control', 'no-cache').end(catalogue)
          return
        }
        const doc = /^\/openapi\/([^/]+)\.json$/.exec(path)
        if (doc !== null) {
          const text = document(decodeURIComponent(doc[1]!)) // group 1 is not optional
          if (text === null) { res.writeStatus('404 Not Found').writeHeader('content-type', JSON_TYPE).end('{"error":{"code":"not_found","message":"No published collection has this id."}}'); return }
          res.writeHeader('content-type', JSON_TYPE).writeHeader('content-disposition', `attachment; filename="${doc[1]}.openapi.json"`).end(text)
          return
        }
        const file = files.lookup(path, false)
        if (file === null) { res.writeStatus('404 Not Found').writeHeader('content-type', 'text/plain').end('Not found'); return }
        res.writeHeader('content-type', file.type).writeHeader('cache-control', file.cache).writeHeader('x-content-type-options', 'nosniff')
          .writeHeader('content-security-policy', PORTAL_CSP).writeHeader('x-frame-options', 'DENY').writeHeader('referrer-policy', 'no-referrer').end(file.body)
      })
    }
  }
}
