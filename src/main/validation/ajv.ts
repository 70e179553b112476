/**
 * The one place management input is checked against JSON Schema: one Ajv instance for every
 * body (routes, MCP tool arguments, import files, credential configs), one for checks that must
 * not change what they check (workflow node settings: no defaults filled in), and one format of
 * problems, `{field, message}` with fields as `a.b[2].c`, every problem at once.
 * (Environment variables and proxies' own request schemas at the gateway have their own
 * instances: coercion of strings, and the hot path.)
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { validationFailed, type ErrorDetail } from '../../common/errors.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

/** Bodies: every error, defaults filled in, no coercion. */
export const ajv = addFormats(new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false }))
/** Checks that leave the data as it was (no defaults); errors carry their schema (`verbose`). */
export const checkOnlyAjv = addFormats(new Ajv({ allErrors: true, verbose: true, strict: false }))

/**
 * A validator compiled on its first call instead of when its module loads. Ajv turns each schema
 * into generated code; compiled at start, the management routes', node settings' and credential
 * types' schemas (most never used by a given process) were about 0.9 MB of generated source and
 * grew the main thread's young generation from 16 to 32 MB for good: about 25 MB of idle RSS, and
 * CPU at start. A schema's first use pays its compile once (a median 28 ms per schema measured on
 * a 2-core host at load average 18); `errors` reads as on Ajv's own function.
 */
export function compileOnFirstUse<T = unknown> (instance: Ajv, schema: object): ValidateFunction<T> {
  let compiled: ValidateFunction<T> | undefined
  const validate = function (this: unknown, data: unknown, dataCxt?: Parameters<ValidateFunction<T>>[1]): boolean {
    compiled ??= instance.compile<T>(schema)
    const ok = compiled.call(this, data, dataCxt)
    validate.errors = compiled.errors
    return ok
  } as ValidateFunction<T>
  return validate
}

const MAX_DETAILS = 50

/** `/collections/0/proxies/2` -> `collections[0].proxies[2]`. */
export function fieldOf (pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === '' ? seg : `.${seg}`
  }
  return out
}

const join = (field: string, name: string): string => field === '' ? name : name.startsWith('[') ? field + name : `${field}.${name}`

/** Ajv errors as problems; `prefix` names what was checked (`config`), else the root is `(body)`. */
export function ajvDetails (errors: ErrorObject[] | null | undefined, prefix = '', max = MAX_DETAILS): ErrorDetail[] {
  const out: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const e of errors ?? []) {
    let field = fieldOf(e.instancePath)
    let message: string
    const p = e.params as Record<string, unknown>
    // An `if` failure only summarises the `then` branch's own errors, which are reported.
    if (e.keyword === 'if') continue
    switch (e.keyword) {
      case 'required': field = join(field, String(p.missingProperty)); message = 'is required'; break
      case 'additionalProperties': field = join(field, String(p.additionalProperty)); message = 'is not a known field'; break
      case 'enum': message = `must be one of: ${(p.allowedValues as unknown[]).map(v => JSON.stringify(v)).join(', ')}`; break
      case 'const': message = `must be ${JSON.stringify(p.allowedValue)}`; break
      case 'type': message = `must be ${Array.isArray(p.type) ? p.type.join(' or ') : String(p.type)}`; break
      case 'pattern': message = 'has an invalid format'; break
      case 'minLength': message = p.limit === 1 ? 'must not be empty' : e.message ?? 'is too short'; break
      default: message = e.message ?? 'is not valid'
    }
    field = prefix === '' ? field : join(prefix, field)
    if (field === '') field = '(body)'
    const key = `${field}\n${message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ field, message })
    if (out.length === max) break
  }
  return out
}

/** Throws 400 validation_failed listing every problem, or returns when the data is valid. */
export function validateWith (validate: ValidateFunction, data: unknown, what = 'The request body'): void {
  if (!validate(data)) {
    const details = ajvDetails(validate.errors)
    throw validationFailed(`${what} is invalid: ${details.map(d => `${d.field} ${d.message}`).join('; ')}.`, details)
  }
}
