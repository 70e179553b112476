/**
 * Reading a configuration file to apply: YAML or JSON text, then the published schema (every
 * problem at once, defaults filled in), then what one resource's schema cannot say (duplicate
 * keys, two proxies on one route, paths, URLs, workflows), each problem with its path into the
 * file (`collections[1].proxies[0].path`). The file comes out in the dump's own shape
 * (`normaliseConfig`), so that a file and a dump of what it made compare equal.
 */
import { parse as parseYaml } from 'yaml'
import { badRequest, unsupportedMediaType, validationFailed, type AppError, type ErrorDetail } from '../../common/errors.js'
import { parseCidr } from '../../common/cidr.js'
import type { Collection, HeaderSpec, Proxy } from '../../common/types.js'
import { mergeUpstream } from '../../common/upstream-settings.js'
import { exportCollections } from '../collections-io/export-file.js'
import { withCorsDefaults } from '../gateway/responses/cors.js'
import { missingUpstream, upstreamProblems } from '../management/upstream-fields.js'
import { basePathProblem, proxyPathProblems, upstreamProblem } from '../management/validation.js'
import { routeKey } from '../store/route-key.js'
import { ajv, ajvDetails, compileOnFirstUse } from '../validation/ajv.js'
import { checkDefinition } from '../workflows/definition.js'
import { proxyKey, type ConfigFile } from './dump.js'
import { unresolvedReferences } from './references.js'
import { configFileSchema } from './schema.js'

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'])
/** Problems listed at most (the message names them all up to here). */
const MAX_DETAILS = 200

// The published schema without its $id (the shared Ajv instance keys schemas by id).
const { $id: _id, ...schema } = configFileSchema
const validate = compileOnFirstUse(ajv, schema)

/** The body of an apply request as data: JSON or YAML by Content-Type (YAML, a superset of JSON, for a file of either). */
export function parseConfigText (raw: Buffer | string, contentType: string | undefined): unknown {
  const text = (typeof raw === 'string' ? raw : raw.toString('utf8')).replace(/^\uFEFF/, '')
  if (text.trim() === '') throw badRequest('The request has no body; send the configuration file as application/json or application/yaml.')
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json' || type.endsWith('+json')) {
    try { return JSON.parse(text) } catch (err) {
      throw validationFailed(`The configuration file is not valid JSON: ${(err as Error).message}.`, [{ field: 'file', message: `is not valid JSON: ${(err as Error).message}` }])
    }
  }
  if (YAML_TYPES.has(type) || type === 'text/plain' || type === '') {
    try { return parseYaml(text) } catch (err) {
      throw validationFailed(`The configuration file is not valid YAML: ${(err as Error).message}.`, [{ field: 'file', message: `is not valid YAML: ${(err as Error).message}` }])
    }
  }
  throw unsupportedMediaType('Send the configuration file as application/json or application/yaml.')
}

export const invalidFile = (details: ErrorDetail[]): AppError => {
  const shown = details.slice(0, MAX_DETAILS)
  return validationFailed(`The configuration file is invalid (${details.length} problem${details.length === 1 ? '' : 's'}); nothing was changed: ${shown.map(d => `${d.field} ${d.message}`).join('; ')}.`, shown)
}

/**
 * The file checked on its own (the references to the gateway's state are apply.ts's to check).
 * `valid`: it has the schema's shape (its other problems may still be listed), so the gateway-side
 * checks can run on it.
 * `allowReferences`: leave `${NAME}` references in credential configs to the caller (the CLI checks
 * a file before it resolves them).
 */
export function checkConfigFile (data: unknown, opts: { allowReferences?: boolean } = {}): { file: ConfigFile, details: ErrorDetail[], valid: boolean } {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { file: data as ConfigFile, details: [{ field: 'file', message: 'must be an object with format_version: 1' }], valid: false }
  }
  const d = data as Record<string, unknown>
  for (const k of ['collections', 'policies', 'clients', 'credentials']) d[k] ??= []
  const valid = validate(d)
  const details: ErrorDetail[] = valid ? [] : ajvDetails(validate.errors, '', 1000).map(x => x.field === '(body)' ? { ...x, field: 'file' } : x)
  const file = d as unknown as ConfigFile
  // Every problem at once: the rules beyond the schema run on a file that failed it too, as far
  // as its shape lets them (a field the schema already faulted is not reported twice).
  let more: ErrorDetail[] = []
  try { more = fileProblems(file) } catch { if (valid) throw new Error('configuration file checks failed on a valid file') }
  const seen = new Set(details.map(x => x.field))
  for (const x of more) if (!seen.has(x.field)) details.push(x)
  if (!valid) return { file, details, valid }
  if (opts.allowReferences !== true) {
    for (const r of unresolvedReferences(file)) {
      details.push({ field: r.field, message: `holds the reference \${${r.name}}, which was not resolved: whoever applies the file sets the secret (gatehouse apply reads the variable from its environment)` })
    }
  }
  return { file, details, valid }
}

function fileProblems (file: ConfigFile): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const add = (field: string, message: string) => details.push({ field, message })
  const unique = <T>(items: T[], key: (t: T) => string, at: (i: number) => string, what: string) => {
    const first = new Map<string, number>()
    items.forEach((x, i) => {
      const k = key(x)
      const f = first.get(k)
      if (f !== undefined) add(at(i), `repeats ${what} '${k}' of ${at(f)}`)
      else first.set(k, i)
    })
  }
  unique(file.collections, c => c.base_path, i => `collections[${i}].base_path`, 'the base_path')
  unique(file.policies, p => p.name, i => `policies[${i}].name`, 'the name')
  unique(file.clients, c => c.name, i => `clients[${i}].name`, 'the name')
  unique(file.credentials, c => c.name, i => `credentials[${i}].name`, 'the name')
  file.collections.forEach((c, ci) => {
    const at = `collections[${ci}]`
    const bp = basePathProblem(c.base_path)
    if (bp !== null) add(`${at}.base_path`, bp)
    for (const x of [...missingUpstream(c), ...upstreamProblems(c)]) add(`${at}.${x.field ?? 'upstream'}`, x.message)
    if (c.upstream_url !== undefined) {
      const up = upstreamProblem(c.upstream_url)
      if (up !== null) add(`${at}.upstream_url`, up)
    }
    headerProblems(c.headers, `${at}.headers`, add)
    unique(c.proxies, proxyKey, i => `${at}.proxies[${i}].path`, 'the methods and path')
    const routes = new Map<string, number>()
    c.proxies.forEach((p, pi) => {
      const here = `${at}.proxies[${pi}]`
      for (const x of proxyPathProblems(p.path, p.target_path ?? p.path, p.target_path !== undefined)) add(`${here}.${x.field ?? 'path'}`, x.message)
      for (const m of p.methods) {
        const other = routes.get(`${m} ${routeKey(p.path)}`)
        if (other !== undefined && proxyKey(c.proxies[other]!) !== proxyKey(p)) add(`${here}.path`, `${m} ${p.path} answers the same requests as ${at}.proxies[${other}] (${c.proxies[other]!.path})`)
        else routes.set(`${m} ${routeKey(p.path)}`, pi)
      }
      headerProblems(p.headers, `${here}.headers`, add)
      for (const f of ['request_schema', 'response_schema'] as const) {
        const s = p[f]
        if (s === null || s === undefined) continue
        try { ajv.compile(s) } catch (err) { add(`${here}.${f}`, `is not a valid JSON Schema: ${(err as Error).message}`) }
      }
      if (p.workflow_enabled && p.workflow === null) add(`${here}.workflow`, 'is required when workflow_enabled is true')
      if (p.workflow !== null) for (const pr of checkDefinition(p.workflow, { enabled: p.workflow_enabled })) add(`${here}.workflow${pr.field === null ? '' : `.${pr.field}`}`, pr.message)
    })
  })
  file.clients.forEach((c, ci) => {
    unique(c.profiles, p => p.name, i => `clients[${ci}].profiles[${i}].name`, 'the name')
    c.profiles.forEach((p, pi) => {
      for (const x of p.ip_allowlist ?? []) if (parseCidr(x) === null) add(`clients[${ci}].profiles[${pi}].ip_allowlist`, `'${x}' is not an IP address or CIDR`)
    })
  })
  return details
}

function headerProblems (headers: HeaderSpec[] | undefined, at: string, add: (field: string, message: string) => void): void {
  (headers ?? []).forEach((h, i) => {
    if (('value' in h) === ('env' in h)) add(`${at}[${i}]`, "needs exactly one of 'value' (a static value) or 'env' (an environment variable name)")
  })
}

const NO_RECORD = { id: '', version: 0, created_at: '', updated_at: '' }

/**
 * A checked file as the dump would write what it describes: defaults filled in, the upstream
 * and CORS settings as stored, lists in the dump's order. Credential configs are kept as given.
 */
export function normaliseConfig (file: ConfigFile): ConfigFile {
  return {
    format_version: 1,
    collections: file.collections.map(({ proxies, ...c }) => {
      const upstream = mergeUpstream(null, c.upstream, c.upstream_url)
      const collection: Collection = {
        ...NO_RECORD,
        name: c.name,
        description: c.description ?? '',
        base_path: c.base_path,
        ...(upstream.targets.length === 1 ? { upstream_url: upstream.targets[0]!.url } : {}),
        upstream,
        status: c.status ?? 'active',
        headers: c.headers ?? [],
        auth_required: c.auth_required ?? true,
        cors: c.cors == null ? null : withCorsDefaults(c.cors)
      }
      const records: Proxy[] = proxies.map(p => ({
        ...NO_RECORD,
        collection_id: '',
        workflow_id: '',
        ...p,
        target_path: p.target_path ?? p.path,
        cache: p.cache ?? null,
        compression: p.compression ?? true,
        websocket: p.websocket ?? false,
        apply_parameter_defaults: p.apply_parameter_defaults ?? false
      }))
      const [item] = exportCollections([{ collection, proxies: records }]).collections
      return { ...item!.collection, proxies: item!.proxies }
    }),
    policies: file.policies.map(p => ({ name: p.name, description: p.description ?? '', status: p.status ?? 'enabled', rate_limit: p.rate_limit ?? null, quota: p.quota ?? null })),
    clients: file.clients.map(c => ({
      name: c.name,
      description: c.description ?? '',
      status: c.status ?? 'active',
      profiles: (c.profiles ?? []).map(p => ({
        name: p.name,
        auth_type: p.auth_type,
        policy: p.policy ?? null,
        collections: [...p.collections ?? []].sort(),
        allowed_methods: p.allowed_methods ?? null,
        ip_allowlist: p.ip_allowlist ?? null,
        oidc: p.oidc ?? null,
        mtls_fingerprint: p.mtls_fingerprint ?? null
      }))
    })),
    credentials: file.credentials.map(c => ({ name: c.name, type: c.type, config: c.config }))
  }
}
