/**
 * The gateway as a file (docs/config-as-code.md):
 *
 *   GET /api/v1/config              the whole configuration, JSON or YAML (Accept: application/yaml)
 *   GET /api/v1/config/schema.json  the file's JSON Schema, for editors and CI checks
 *
 * Role editor for the file: it holds draft proxies, which a viewer does not see. The schema is public.
 */
import { stringify as toYaml } from 'yaml'
import { dumpConfig } from '../config-file/dump.js'
import { CONFIG_SCHEMA_PATH, configFileSchema } from '../config-file/schema.js'
import type { RequestContext, Router } from './router.js'
import type { ManagementDeps } from './server.js'

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']

/** YAML when the Accept header names a YAML type before (or without) JSON; JSON otherwise. */
export function wantsYaml (accept: string | undefined): boolean {
  for (const part of (accept ?? '').split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase()
    if (YAML_TYPES.includes(type)) return true
    if (type === 'application/json') return false
  }
  return false
}

export function registerConfigRoutes (router: Router, deps: ManagementDeps): void {
  router.add('GET', '/api/v1/config', async (ctx: RequestContext) => {
    const file = await dumpConfig(deps.store)
    // YAML over REST only: an MCP tool call answers JSON whatever its transport accepts.
    if (ctx.caller?.source !== 'rest' || !wantsYaml(ctx.req.headers.accept)) return { status: 200, body: file }
    // The router writes JSON only; YAML is written here, as the metrics route writes its text.
    const text = toYaml(file, { lineWidth: 0 })
    ctx.res.writeHead(200, { 'content-type': 'application/yaml; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text)
    return undefined
  }, { role: 'editor' })

  // Public, like a schema store entry: editors fetch it without a token; it says nothing about this gateway's state.
  router.add('GET', CONFIG_SCHEMA_PATH, async () => ({ status: 200, body: configFileSchema }), { public: true })
}
