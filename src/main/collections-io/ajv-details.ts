/** ajv errors → the `{field, message}` details of a validation error, fields as `a.b[2].c`. */
import type { ErrorObject } from 'ajv'
import type { ErrorDetail } from '../../common/errors.js'

const MAX_DETAILS = 50

/** `/collections/0/proxies/2` → `collections[0].proxies[2]`. */
export function fieldOf (pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    out += /^\d+$/.test(seg) ? `[${seg}]` : out === '' ? seg : `.${seg}`
  }
  return out
}

const join = (field: string, name: string): string => field === '' ? name : `${field}.${name}`

export function ajvDetails (errors: ErrorObject[] | null | undefined): ErrorDetail[] {
  const out: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const e of errors ?? []) {
    let field = fieldOf(e.instancePath)
    let message: string
    const p = e.params as Record<string, unknown>
    switch (e.keyword) {
      case 'required': field = join(field, String(p.missingProperty)); message = 'is required'; break
      case 'additionalProperties': field = join(field, String(p.additionalProperty)); message = 'is not a known field'; break
      case 'enum': message = `must be one of: ${(p.allowedValues as unknown[]).map(v => JSON.stringify(v)).join(', ')}`; break
      case 'const': message = `must be ${JSON.stringify(p.allowedValue)}`; break
      case 'type': message = `must be ${Array.isArray(p.type) ? p.type.join(' or ') : String(p.type)}`; break
      default: message = e.message ?? 'is not valid'
    }
    const key = `${field}\n${message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ field, message })
    if (out.length === MAX_DETAILS) break
  }
  return out
}
