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
import { parseConfigText } from '../config-file/apply-check.js'
import { APPLY_PATH, applyConfig } from '../config-file/apply.js'
import { dumpConfig } from '../config-file/dump.js'
import { CONFIG_SCHEMA_PATH, configFileSchema } from '../config-file/schema.js'
import { loadSecretsKey } from '../credentials/secrets.js'
import { configVersion } from '../store/rows.js'
import type { RequestContext, Router } from './router.js'
import type { ManagementDeps } from './server.js'
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

export function registerConfigRoutes (router: Router, deps: ManagementDeps): void {
  let key: Promise<Buffer> | null = null
  const secretsKey = async () => await (key ??= loadSecretsKey({ secretsKey: deps.config.SECRETS_KEY, dataDir: deps.config.DATA_DIR }))

  router.add('GET', '/api/v1/config', async (ctx: RequestContext) => {
    // The file and its version read as one view, so that If-Match on this ETag means this file.
    const { file, version } = await deps.store.tx(async q => {
      await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      return { version: await configVersion(q), file: await dumpConfig(q) }
    })
    // YAML over REST only: an MCP tool call answers JSON whatever its transport accepts.
    if (ctx.caller?.source !== 'rest' || !wantsYaml(ctx.req.headers.accept)) return { status: 200, body: file, headers: etag(version) }
    // The router writes JSON only; YAML is written here, as the metrics route writes its text.
    const text = toYaml(file, { lineWidth: 0 })
    ctx.res.writeHead(200, { 'content-type': 'application/yaml; charset=utf-8', 'content-length': Buffer.byteLength(text), ...etag(version) }).end(text)
    return undefined
  }, { role: 'editor' })

  // Audited inside the apply's transaction, one row per changed resource (not as one request).
  router.add('POST', APPLY_PATH, async (ctx: RequestContext) => {
    const raw = ctx.rawBody ?? Buffer.alloc(0)
    // Over MCP the file is a tool argument, sent on as JSON.
    const data = parseConfigText(raw, ctx.caller?.source === 'rest' ? ctx.req.headers['content-type'] : 'application/json')
    const result = await applyConfig(deps.store, data, {
      dryRun: flag(ctx.query, 'dry_run'),
      prune: flag(ctx.query, 'prune'),
      ifVersion: ctx.ifMatch,
      actor: { sub: ctx.user?.sub ?? null, source: ctx.caller?.source ?? 'rest', remoteAddr: ctx.req.socket.remoteAddress ?? null },
      secretsKey
    })
    if (result.applied) {
      for (const e of result.events) deps.events.publish(e)
      deps.onConfigChange()
    }
    return { status: 200, body: { changes: result.changes, applied: result.applied, version: result.version }, headers: etag(result.version) }
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
