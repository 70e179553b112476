/** A collection's CORS settings in its form: no allowed origins means CORS is off (null). */
import { Field } from '../ui'

export interface Cors {
  allow_origins: string[], allow_methods: string[], allow_headers: string[], expose_headers: string[]
  allow_credentials: boolean, max_age_s: number | null
}

const list = (s: string | undefined) => (s ?? '').split(/[\s,]+/).filter(x => x !== '')

export function CorsFields ({ value }: { value: Cors | null | undefined }) {
  return (
    <fieldset>
      <legend>Browser access (CORS)</legend>
      <Field label='Allowed origins' hint='Comma-separated: https://app.example.com, https://*.example.org or *. Empty: CORS off.'>
        <input name='cors_allow_origins' defaultValue={value?.allow_origins.join(', ') ?? ''} />
      </Field>
      <div className='cols'>
        <Field label='Allowed methods' hint='Empty: GET, HEAD, POST, PUT, PATCH, DELETE'><input name='cors_allow_methods' defaultValue={value?.allow_methods.join(', ') ?? ''} /></Field>
        <Field label='Allowed request headers' hint='Empty: those the browser asks for'><input name='cors_allow_headers' defaultValue={value?.allow_headers.join(', ') ?? ''} /></Field>
      </div>
      <div className='cols'>
        <Field label='Exposed response headers'><input name='cors_expose_headers' defaultValue={value?.expose_headers.join(', ') ?? ''} /></Field>
        <Field label='Preflight max age (seconds)'><input name='cors_max_age_s' type='number' min={0} max={86400} defaultValue={value?.max_age_s ?? ''} /></Field>
      </div>
      <label className='check'><input type='checkbox' name='cors_allow_credentials' defaultChecked={value?.allow_credentials ?? false} /> Allow credentials (cookies, Authorization)</label>
    </fieldset>
  )
}

/** The `cors` field from the form's values (null when no origin is listed). */
export function corsFromForm (v: Record<string, string>): Cors | null {
  const origins = list(v.cors_allow_origins)
  if (origins.length === 0) return null
  const methods = list(v.cors_allow_methods).map(m => m.toUpperCase())
  return {
    allow_origins: origins,
    allow_methods: methods.length > 0 ? methods : ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allow_headers: list(v.cors_allow_headers),
    expose_headers: list(v.cors_expose_headers),
    allow_credentials: v.cors_allow_credentials === 'on',
    max_age_s: v.cors_max_age_s === undefined || v.cors_max_age_s === '' ? null : Number(v.cors_max_age_s)
  }
}
