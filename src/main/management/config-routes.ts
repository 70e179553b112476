/**
 * The gateway as a file (docs/config-as-code.md):
 *
 *   GET /api/v1/config              the whole configuration, JSON or YAML (Accept: application/yaml)
 *   GET /api/v1/config/schema.json  the file's JSON Schema, for editors and CI checks
 *   POST /api/v1/config/apply       make the gateway match a file, in one transaction
 *                                   (?dry_run=true: only the changes; ?prune=true: also delete what it does not name)
 *
 * Role editor for the file: it holds draft proxies, which a viewer does not see. Apply: admin (it
 * writes credentials, clients and policies). The schema is public. The file's ETag is the
 * configuration version; an apply with If-Match on it fails (412) when anything changed since.
 */
import { stringify as toYaml } from 'yaml'
import { validationFailed } from '../../common/errors.js'
import { APPLY_PATH } from '../config-file/apply.js'
import { CONFIG_SCHEMA_PATH, configFileSchema } from '../config-file/schema.js'
import { applyConfigOp, dumpConfigOp } from '../operations/config.js'
import type { OperationDeps } from '../operations/types.js'
import { callerOf } from './operation-routes.js'
import type { RequestContext, Router } from './router.js'
import { etag } from './validation.js'

/** A configuration file may be large (every proxy's workflow); the collection import takes as much. */
const MAX_FILE_BYTES = 20 * 1024 * 1024

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

export function registerConfigRoutes (router: Router, operations: OperationDeps): void {
  router.add('GET', '/api/v1/config', async (ctx: RequestContext) => {
    const caller = callerOf(ctx)
    const { file, version } = await dumpConfigOp(operations, caller, {})
    // YAML over REST only: an MCP tool call answers JSON whatever its transport accepts.
    if (caller.source !== 'rest' || !wantsYaml(ctx.req.headers.accept)) return { status: 200, body: file, headers: etag(version) }
    // The router writes JSON only; YAML is written here, as the metrics route writes its text.
    const text = toYaml(file, { lineWidth: 0 })
    ctx.res.writeHead(200, { 'content-type': 'application/yaml; charset=utf-8', 'content-length': Buffer.byteLength(text), ...etag(version) }).end(text)
    return undefined
  }, { role: 'editor' })

  // Audited inside the apply's transaction, one row per changed resource (not as one request).
  router.add('POST', APPLY_PATH, async (ctx: RequestContext) => {
    const caller = callerOf(ctx)
    const result = await applyConfigOp(operations, caller, {
      raw: ctx.rawBody ?? Buffer.alloc(0),
      // Over MCP the file is a tool argument, sent on as JSON.
      contentType: caller.source === 'rest' ? ctx.req.headers['content-type'] : 'application/json',
      dryRun: flag(ctx.query, 'dry_run'),
      prune: flag(ctx.query, 'prune'),
      ifMatch: ctx.ifMatch,
      remoteAddr: ctx.req.socket.remoteAddress ?? null
    })
    return { status: 200, body: result, headers: etag(result.version) }
  }, { role: 'admin', raw: true, maxBodyBytes: MAX_FILE_BYTES, audit: false })

  // Public, like a schema store entry: editors fetch it without a token; it says nothing about this gateway's state.
  router.add('GET', CONFIG_SCHEMA_PATH, async () => ({ status: 200, body: configFileSchema }), { public: true })
}

function flag (query: URLSearchParams, name: string): boolean {
  const v = query.get(name)
  if (v === null || v === 'false') return false
  if (v === 'true' || v === '') return true
  throw validationFailed(`${name} must be 'true' or 'false'.`, [{ field: name, message: "must be 'true' or 'false'" }])
}
