/**
 * Reads an uploaded collection export file: bounded size, JSON, then the strict schema of
 * format_version 1, then the checks a schema cannot express (duplicate routes and base
 * paths, headers with both a value and an env reference, edges to unknown nodes).
 */
import { AppError, payloadTooLarge, validationFailed, type ErrorDetail } from '../../common/errors.js'
import { ajv, ajvDetails, compileOnFirstUse } from '../validation/ajv.js'
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type ExportFile } from './export-file.js'
import { exportFileSchema } from './export-file-schema.js'
import { isObject } from './schema-walk.js'

export const MAX_IMPORT_FILE_BYTES = 20 * 1024 * 1024

export type ImportFileResult =
  | { ok: true, file: ExportFile }
  /** `error` is the AppError to answer with (400 or 413); `details` are its `{field, message}` list. */
  | { ok: false, error: AppError, details: ErrorDetail[] }

const validate = compileOnFirstUse<ExportFile>(ajv, exportFileSchema)

/** Parses and validates an export file; never throws for bad input. Defaults are filled in. */
export function parseImportFile (input: Buffer | string, limits: { maxBytes?: number } = {}): ImportFileResult {
  const maxBytes = limits.maxBytes ?? MAX_IMPORT_FILE_BYTES
  const size = typeof input === 'string' ? Buffer.byteLength(input) : input.length
  if (size > maxBytes) {
    const error = payloadTooLarge(`The collection file is larger than ${maxBytes} bytes.`)
    return { ok: false, error, details: [{ field: 'file', message: `is larger than ${maxBytes} bytes` }] }
  }
  let data: unknown
  try {
    data = JSON.parse((typeof input === 'string' ? input : input.toString('utf8')).replace(/^\uFEFF/, ''))
  } catch (err) {
    return fail('The collection file is not valid JSON.', [{ field: 'file', message: `is not valid JSON: ${(err as Error).message}` }])
  }
  const envelope = checkEnvelope(data)
  if (envelope !== undefined) return envelope
  if (!validate(data)) return fail('The collection file is not valid; see details.', ajvDetails(validate.errors))
  const details = semanticDetails(data)
  if (details.length > 0) return fail('The collection file is not valid; see details.', details)
  for (const { proxies } of data.collections) for (const p of proxies) p.target_path ??= p.path
  return { ok: true, file: data }
}

function fail (message: string, details: ErrorDetail[]): ImportFileResult {
  return { ok: false, error: validationFailed(message, details), details }
}

/** The first checks, with messages for the usual mistakes: an OpenAPI document, a newer file. */
function checkEnvelope (data: unknown): ImportFileResult | undefined {
  if (!isObject(data)) return fail('The collection file must be a JSON object.', [{ field: 'file', message: 'must be a JSON object' }])
  if (data.format === undefined && (data.openapi !== undefined || data.swagger !== undefined)) {
    return fail('This is an OpenAPI document, not a collection file; import it with POST /api/v1/collections/import/openapi.',
      [{ field: 'format', message: `is required: '${EXPORT_FORMAT}'` }])
  }
  if (data.format !== EXPORT_FORMAT) {
    return fail(`This is not a Gatehouse collection file: 'format' must be '${EXPORT_FORMAT}'.`,
      [{ field: 'format', message: `must be '${EXPORT_FORMAT}'` }])
  }
  if (typeof data.format_version === 'number' && data.format_version > EXPORT_FORMAT_VERSION) {
    return fail(`The collection file has format_version ${data.format_version}, written by a newer release; this service reads version ${EXPORT_FORMAT_VERSION}.`,
      [{ field: 'format_version', message: `must be ${EXPORT_FORMAT_VERSION}` }])
  }
  return undefined
}

// `/a/{id}` and `/a/{name}` are the same route to the gateway
const routeKey = (method: string, path: string): string => `${method} ${path.replace(/\{[^}]*\}/g, '{}')}`

function semanticDetails (file: ExportFile): ErrorDetail[] {
  const details: ErrorDetail[] = []
  const basePaths = new Map<string, number>()
  file.collections.forEach(({ collection, proxies }, ci) => {
    const at = `collections[${ci}]`
    const first = basePaths.get(collection.base_path)
    if (first !== undefined) details.push({ field: `${at}.collection.base_path`, message: `'${collection.base_path}' is already used by collections[${first}]` })
    else basePaths.set(collection.base_path, ci)
    checkHeaders(collection.headers, `${at}.collection.headers`, details)
    const routes = new Map<string, number>()
    proxies.forEach((p, pi) => {
      const here = `${at}.proxies[${pi}]`
      checkHeaders(p.headers, `${here}.headers`, details)
      for (const m of p.methods) {
        const key = routeKey(m, p.path)
        const other = routes.get(key)
        if (other !== undefined) details.push({ field: `${here}.path`, message: `${m} ${p.path} is already used by ${at}.proxies[${other}]` })
        else routes.set(key, pi)
      }
      if (p.workflow !== null) {
        const ids = new Set<string>()
        p.workflow.nodes.forEach((n, ni) => {
          if (ids.has(n.id)) details.push({ field: `${here}.workflow.nodes[${ni}].id`, message: `'${n.id}' is used by another node` })
          ids.add(n.id)
        })
        p.workflow.edges.forEach((e, ei) => {
          for (const end of ['source', 'target'] as const) {
            if (!ids.has(e[end])) details.push({ field: `${here}.workflow.edges[${ei}].${end}`, message: `'${e[end]}' is not a node of this workflow` })
          }
        })
      }
    })
  })
  return details.slice(0, 50)
}

function checkHeaders (headers: ExportFile['collections'][number]['collection']['headers'], at: string, details: ErrorDetail[]): void {
  headers.forEach((h, i) => {
    const hasValue = 'value' in h
    const hasEnv = 'env' in h
    if (hasValue === hasEnv) details.push({ field: `${at}[${i}]`, message: "needs exactly one of 'value' (a static value) or 'env' (an environment variable name)" })
  })
}
